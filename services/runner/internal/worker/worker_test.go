package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runner/internal/executor"
)

// runs is a fake runs service.
type runs struct {
	claim    func(attempt int) (bool, error)
	beat     Beat
	mu       sync.Mutex
	claims   int
	beats    int
	runners  []string
	beatSeen chan struct{}
	// applies, when set, has the beats of an attempt whose end it published answer as
	// the runs service does once the report is applied.
	applies *publisher
}

func (r *runs) Claim(_ context.Context, _ string, attempt int) (bool, error) {
	r.mu.Lock()
	r.claims++
	r.mu.Unlock()
	if r.claim == nil {
		return true, nil
	}
	return r.claim(attempt)
}

func (r *runs) Heartbeat(_ context.Context, taskRunID string, attempt int, runner string) (Beat, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.beats++
	r.runners = append(r.runners, runner)
	if r.applies != nil {
		for _, s := range r.applies.all() {
			if s.update.Kind == events.UpdateEnded && s.update.TaskRunID == taskRunID && s.update.Attempt == attempt {
				return Cancel, nil
			}
		}
	}
	if r.beats == 1 && r.beatSeen != nil {
		close(r.beatSeen)
	}
	return r.beat, nil
}

func (r *runs) claimCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.claims
}

// published is one event the fake publisher got.
type published struct {
	topic, key string
	id         string
	update     events.TaskUpdate
}

type publisher struct {
	mu   sync.Mutex
	sent []published
}

func newPublisher() *publisher { return &publisher{} }

func (p *publisher) Publish(_ context.Context, topic, key string, e event.Event) error {
	u, err := events.Decode[events.TaskUpdate](e)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.sent = append(p.sent, published{topic: topic, key: key, id: e.ID(), update: u})
	p.mu.Unlock()
	return nil
}

func (p *publisher) all() []published {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]published(nil), p.sent...)
}

func dispatch(t *testing.T, d events.TaskAttempt) event.Event {
	t.Helper()
	e, err := events.New(fmt.Sprintf("%s/%d", d.TaskRunID, d.Attempt), events.Source("runs"), events.TypeTaskDispatch, "", d)
	require.NoError(t, err)
	return e
}

func newWorker(t *testing.T, r RunsClient, p Publisher, exec func(events.TaskSpec) executor.Executor) *Worker {
	return New(Options{
		ID: "runner-1", WorkDir: t.TempDir(), Concurrency: 2, Heartbeat: 10 * time.Millisecond,
		MaxLog: 1 << 20, Runs: r, Publisher: p, Executor: exec,
	})
}

func attempt(script string) events.TaskAttempt {
	return events.TaskAttempt{
		TaskRunID: "tr1", RunID: "run1", Attempt: 2, Type: "script",
		Spec: events.TaskSpec{Script: script},
	}
}

func TestAttemptReportsLogThenEnd(t *testing.T) {
	t.Parallel()
	p := newPublisher()
	w := newWorker(t, &runs{}, p, nil)
	d := attempt("for i in 1 2 3; do echo line $i pw=hunter2; done\necho -n 42 > $(results.answer.path)")
	d.Secrets, d.Results = []string{"hunter2"}, []string{"answer"}

	require.NoError(t, w.Handle(t.Context(), dispatch(t, d)))
	w.Wait()

	sent := p.all()
	require.NotEmpty(t, sent)
	var log strings.Builder
	for i, s := range sent[:len(sent)-1] {
		assert.Equal(t, events.TaskUpdates, s.topic)
		assert.Equal(t, "run1", s.key)
		assert.Equal(t, fmt.Sprintf("tr1/2/log/%d", i), s.id)
		assert.Equal(t, events.UpdateLog, s.update.Kind)
		assert.Equal(t, i, s.update.Seq)
		log.WriteString(s.update.Log)
	}
	assert.Equal(t, "line 1 pw=********\nline 2 pw=********\nline 3 pw=********\n", log.String())

	last := sent[len(sent)-1]
	assert.Equal(t, "tr1/2/ended", last.id)
	assert.Equal(t, "run1", last.key)
	u := last.update
	assert.Equal(t, events.UpdateEnded, u.Kind)
	assert.Equal(t, executor.StatusSucceeded, u.Status)
	require.NotNil(t, u.ExitCode)
	assert.Equal(t, 0, *u.ExitCode)
	assert.Equal(t, map[string]string{"answer": "42"}, u.Results)
	assert.Equal(t, "runner-1", u.Runner)
	assert.Equal(t, "tr1", u.TaskRunID)
	assert.Equal(t, 2, u.Attempt)
	assert.False(t, u.Time.IsZero())
}

// A sealed attempt is opened in memory only: its journal keeps it sealed, its log is
// masked, a result holding a secret goes back sealed and the message masked; an attempt
// that cannot be opened fails without running.
func TestSealedAttempt(t *testing.T) {
	t.Parallel()
	box, err := secrets.FromString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	require.NoError(t, err)
	d := attempt("echo pw=hunter2; printf 'token hunter2' > $(results.token.path); printf ok > $(results.plain.path)\n" +
		"cat $(dirname $(results.plain.path))/../../.journal/*; exit 3")
	d.Secrets, d.Results = []string{"hunter2"}, []string{"token", "plain"}
	require.NoError(t, d.Seal(box))

	t.Run("opened", func(t *testing.T) {
		t.Parallel()
		p := newPublisher()
		w := New(Options{ID: "runner-1", WorkDir: t.TempDir(), Heartbeat: 10 * time.Millisecond, MaxLog: 1 << 20,
			Runs: &runs{}, Publisher: p, Sealer: box})
		require.NoError(t, w.Handle(t.Context(), dispatch(t, d)))
		w.Wait()
		sent := p.all()
		require.NotEmpty(t, sent)
		var log strings.Builder
		for _, s := range sent[:len(sent)-1] {
			log.WriteString(s.update.Log)
		}
		assert.Contains(t, log.String(), "pw=********\n")
		assert.Contains(t, log.String(), `"sealed":"enc:v1:`, "the journal holds the attempt sealed")
		assert.NotContains(t, log.String(), "hunter2")
		u := sent[len(sent)-1].update
		assert.Equal(t, executor.StatusFailed, u.Status)
		assert.Equal(t, "ok", u.Results["plain"])
		require.True(t, secrets.IsSealed(u.Results["token"]), u.Results["token"])
		plain, err := box.Open(u.Results["token"])
		require.NoError(t, err)
		assert.Equal(t, "token hunter2", plain)
	})
	t.Run("no key", func(t *testing.T) {
		t.Parallel()
		p := newPublisher()
		ran := false
		w := newWorker(t, &runs{}, p, func(events.TaskSpec) executor.Executor { ran = true; return &executor.Process{} })
		require.NoError(t, w.Handle(t.Context(), dispatch(t, d)))
		w.Wait()
		sent := p.all()
		require.NotEmpty(t, sent)
		u := sent[len(sent)-1].update
		assert.Equal(t, executor.StatusFailed, u.Status)
		assert.Contains(t, u.Message, "cannot open")
		assert.False(t, ran && u.ExitCode != nil, "the step did not run")
	})
}

// TestSkipped checks that an attempt not claimed never runs, though its step is prepared
// while it is claimed: its script would leave a file behind, and its workspace is gone.
func TestSkipped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		claim      func(int) (bool, error)
		generic    bool
		wantErr    bool
		wantClaims int
	}{
		{name: "claimed elsewhere or cancelled (409/404)", claim: func(int) (bool, error) { return false, nil }, wantClaims: 1},
		{name: "runs service away, then the attempt taken", claim: awayOnce(), wantClaims: 2},
		{name: "generic tasks are external workers'", generic: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &runs{claim: tt.claim}
			p := newPublisher()
			marker := filepath.Join(t.TempDir(), "ran")
			give := attempt("touch '" + marker + "'")
			if tt.generic {
				give = events.TaskAttempt{TaskRunID: "tr1", Attempt: 1, Type: tasktype.Generic, Queue: "q"}
			}
			w := newWorker(t, r, p, nil)
			err := w.Handle(t.Context(), dispatch(t, give))
			w.Wait()
			assert.Equal(t, tt.wantErr, err != nil, "err: %v", err)
			assert.Equal(t, tt.wantClaims, r.claimCount())
			assert.NoFileExists(t, marker, "the step ran")
			assert.NoDirExists(t, w.workspace(give), "the prepared workspace is removed")
			assert.Empty(t, p.all())
			assert.Len(t, w.sem, 0, "the slot is given back")
		})
	}
}

func TestInvalidDispatchIsPermanent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give func(t *testing.T) event.Event
	}{
		{name: "no data", give: func(t *testing.T) event.Event {
			e := event.New()
			e.SetID("x")
			e.SetType(events.TypeTaskDispatch)
			e.SetSource("/t")
			return e
		}},
		{name: "task run id with a path", give: func(t *testing.T) event.Event {
			return dispatch(t, events.TaskAttempt{TaskRunID: "../etc", Attempt: 1})
		}},
		{name: "no attempt", give: func(t *testing.T) event.Event { return dispatch(t, events.TaskAttempt{TaskRunID: "tr1"}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &runs{}
			w := newWorker(t, r, newPublisher(), nil)
			err := w.Handle(t.Context(), tt.give(t))
			assert.ErrorIs(t, err, kafkax.ErrPermanent)
			assert.Zero(t, r.claimCount())
		})
	}
}

func TestHeartbeatStops(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		beat       Beat
		wantStatus string // empty: nothing is reported
	}{
		{name: "cancel kills and reports cancelled", beat: Cancel, wantStatus: executor.StatusCancelled},
		{name: "lost attempt kills and reports nothing", beat: Lost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &runs{beat: tt.beat}
			p := newPublisher()
			w := newWorker(t, r, p, nil)
			// Only the kill ends this step: Wait returning is the proof.
			require.NoError(t, w.Handle(t.Context(), dispatch(t, attempt("exec sleep 600"))))
			w.Wait()
			sent := p.all()
			if tt.wantStatus == "" {
				assert.Empty(t, sent)
				return
			}
			require.NotEmpty(t, sent)
			assert.Equal(t, tt.wantStatus, sent[len(sent)-1].update.Status)
			assert.Nil(t, sent[len(sent)-1].update.ExitCode)
		})
	}
}

// A runner that stops leaves its steps running; its next start, on the same work
// directory, follows them, reports each once and sends the rest of its log, as the
// runner that claimed it.
func TestStopLeavesTheStepToTheNextStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := &runs{beatSeen: make(chan struct{})}
	p := newPublisher()
	w := New(Options{ID: "runner-1", WorkDir: dir, Heartbeat: 10 * time.Millisecond, Runs: r, Publisher: p})
	ctx, cancel := context.WithCancel(t.Context())
	d := attempt("echo started; while [ ! -f proceed ]; do sleep 0.01; done; echo done")
	require.NoError(t, w.Handle(ctx, dispatch(t, d)))
	require.Eventually(t, func() bool { return logOf(p.all()) == "started\n" }, 10*time.Second, 5*time.Millisecond)
	cancel()
	w.Wait()
	for _, s := range p.all() {
		require.NotEqual(t, events.UpdateEnded, s.update.Kind, "a runner that stops reports nothing of a step going on")
	}

	r2 := &runs{}
	w2 := New(Options{ID: "runner-2", WorkDir: dir, Heartbeat: 10 * time.Millisecond, Runs: r2, Publisher: p})
	require.NoError(t, w2.Recover(t.Context()))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tr1-2", "proceed"), nil, 0o600))
	w2.Wait()
	sent := p.all()
	last := sent[len(sent)-1].update
	assert.Equal(t, events.UpdateEnded, last.Kind)
	assert.Equal(t, executor.StatusSucceeded, last.Status)
	assert.Equal(t, "started\ndone\n", logOf(sent), "the log, each line once")
	r2.mu.Lock()
	defer r2.mu.Unlock()
	for _, runner := range r2.runners {
		assert.Equal(t, "runner-1", runner, "beats go on under the claiming runner's name")
	}
	_, err := os.Stat(filepath.Join(dir, "tr1-2"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the workspace is removed")
}

// logOf joins the log chunks sent, in order of their numbers.
func logOf(sent []published) string {
	chunks := map[int]string{}
	for _, s := range sent {
		if s.update.Kind == events.UpdateLog {
			chunks[s.update.Seq] = s.update.Log
		}
	}
	var b strings.Builder
	for i := 0; i < len(chunks); i++ {
		b.WriteString(chunks[i])
	}
	return b.String()
}

// gate is an executor whose steps run until released.
type gate struct {
	mu      sync.Mutex
	started []string
	release chan struct{}
}

func (g *gate) Execute(ctx context.Context, step executor.Step, out io.Writer) executor.Outcome {
	g.mu.Lock()
	g.started = append(g.started, filepath.Base(step.Dir))
	g.mu.Unlock()
	fmt.Fprintln(out, "running")
	select {
	case <-g.release:
		return executor.Outcome{Status: executor.StatusSucceeded}
	case <-ctx.Done():
		return executor.Outcome{Status: executor.StatusFailed}
	}
}

func TestConcurrencyBoundsAttempts(t *testing.T) {
	t.Parallel()
	// In a bubble, synctest.Wait returns once every goroutine is blocked: a Handle that
	// has not returned by then is waiting for a slot.
	synctest.Test(t, func(t *testing.T) {
		g := &gate{release: make(chan struct{})}
		r := &runs{}
		p := newPublisher()
		w := New(Options{
			ID: "runner-1", WorkDir: t.TempDir(), Concurrency: 1, Heartbeat: time.Hour, Runs: r, Publisher: p,
			Executor: func(events.TaskSpec) executor.Executor { return g },
		})
		first, second := attempt("a"), attempt("b")
		second.TaskRunID = "tr2"
		require.NoError(t, w.Handle(t.Context(), dispatch(t, first)))

		returned := make(chan error, 1)
		go func() { returned <- w.Handle(t.Context(), dispatch(t, second)) }()
		synctest.Wait()
		select {
		case err := <-returned:
			t.Fatalf("second Handle returned (%v) while the only slot was taken", err)
		default:
		}
		assert.Equal(t, 1, r.claimCount(), "the second attempt is not claimed before it can run")

		g.release <- struct{}{}
		require.NoError(t, <-returned)
		synctest.Wait()
		g.mu.Lock()
		assert.Equal(t, []string{"tr1-2", "tr2-2"}, g.started)
		g.mu.Unlock()
		close(g.release)
		w.Wait()
	})
}

func TestDuplicateDeliveryWhileRunning(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g := &gate{release: make(chan struct{})}
		r := &runs{}
		w := New(Options{
			ID: "runner-1", WorkDir: t.TempDir(), Concurrency: 2, Heartbeat: time.Hour, Runs: r, Publisher: newPublisher(),
			Executor: func(events.TaskSpec) executor.Executor { return g },
		})
		e := dispatch(t, attempt("a"))
		require.NoError(t, w.Handle(t.Context(), e))
		synctest.Wait()
		require.NoError(t, w.Handle(t.Context(), e))
		assert.Equal(t, 1, r.claimCount())
		close(g.release)
		w.Wait()
	})
}

func TestWorkspaceIsPerAttempt(t *testing.T) {
	t.Parallel()
	p := newPublisher()
	w := newWorker(t, &runs{applies: p}, p, nil)
	d := attempt("pwd")
	require.NoError(t, w.Handle(t.Context(), dispatch(t, d)))
	w.Wait()
	w.WaitLingering()
	sent := p.all()
	require.Len(t, sent, 2)
	assert.Equal(t, filepath.Join(w.opts.WorkDir, "tr1-2")+"\n", sent[0].update.Log)
	entries, err := os.ReadDir(w.opts.WorkDir)
	require.NoError(t, err)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	assert.Equal(t, []string{".journal"}, left, "the workspace is removed")
	pending, err := w.journal.pending()
	require.NoError(t, err)
	assert.Empty(t, pending, "an attempt whose report was applied leaves no journal entry")
}

// A step that ended while its report could not leave is reported when the runner starts
// again, and not run a second time; one claimed but never started is reported failed, so
// its run retries it at once.
func TestRecoverReportsFinishedAttempts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := newJournal(filepath.Join(dir, ".journal"))
	code := 0
	finished := events.TaskAttempt{TaskRunID: "r1.1", RunID: "r1", Attempt: 2}
	unstarted := events.TaskAttempt{TaskRunID: "r1.2", RunID: "r1", Attempt: 1}
	require.NoError(t, j.write(journalEntry{Attempt: finished, Runner: "r-old",
		Outcome: &executor.Outcome{Status: executor.StatusSucceeded, ExitCode: &code, Results: map[string]string{"out": "x"}}}))
	require.NoError(t, j.write(journalEntry{Attempt: unstarted, Runner: "r-old"}))

	pub := newPublisher()
	w := New(Options{ID: "r-new", WorkDir: dir, Heartbeat: 10 * time.Millisecond, Publisher: pub, Runs: &runs{applies: pub}})
	require.NoError(t, w.Recover(context.Background()))
	w.Wait()
	w.WaitLingering()
	got := map[string]events.TaskUpdate{}
	for _, s := range pub.all() {
		assert.Equal(t, "r1", s.key)
		got[s.id] = s.update
	}
	require.Len(t, got, 2)
	assert.Equal(t, events.UpdateEnded, got["r1.1/2/ended"].Kind)
	assert.Equal(t, map[string]string{"out": "x"}, got["r1.1/2/ended"].Results)
	assert.Equal(t, executor.StatusFailed, got["r1.2/1/ended"].Status)
	assert.Equal(t, "the runner stopped before the step started", got["r1.2/1/ended"].Message)
	left, err := newJournal(j.dir).pending()
	require.NoError(t, err)
	assert.Empty(t, left)
}

// awayOnce answers a claim with an error the first time, as a runs service that is away,
// and "not yours" after.
func awayOnce() func(int) (bool, error) {
	var calls atomic.Int32
	return func(int) (bool, error) {
		if calls.Add(1) == 1 {
			return false, errors.New("503")
		}
		return false, nil
	}
}

// endWatcher is a publisher that records whether the attempt's workspace was still there
// when its end was published.
type endWatcher struct {
	*publisher
	workspace string
	present   bool
}

func (p *endWatcher) Publish(ctx context.Context, topic, key string, e event.Event) error {
	if u, err := events.Decode[events.TaskUpdate](e); err == nil && u.Kind == events.UpdateEnded {
		_, err := os.Stat(p.workspace)
		p.present = err == nil
	}
	return p.publisher.Publish(ctx, topic, key, e)
}

func TestReportGoesOutBeforeTheWorkspaceIsRemoved(t *testing.T) {
	t.Parallel()
	p := &endWatcher{publisher: newPublisher()}
	w := newWorker(t, &runs{applies: p.publisher}, p, nil)
	p.workspace = filepath.Join(w.opts.WorkDir, "tr1-2")
	require.NoError(t, w.Handle(t.Context(), dispatch(t, attempt("true"))))
	w.Wait()
	assert.True(t, p.present, "removing the workspace does not hold up the report")
	_, err := os.Stat(p.workspace)
	assert.ErrorIs(t, err, os.ErrNotExist, "the workspace is removed once the end is reported")
}

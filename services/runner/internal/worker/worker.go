// Package worker executes the task attempts dispatched to runners: it claims each from the
// runs service, runs it with an executor while heartbeating, and publishes its log and
// its end on the task-updates topic.
package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runner/internal/executor"
	"github.com/baton-flow/baton/services/runner/internal/logstream"
)

// Beat is the runs service's answer to a heartbeat.
type Beat int

// Heartbeat answers.
const (
	// Continue: the attempt is still wanted.
	Continue Beat = iota
	// Cancel: the run no longer wants the attempt; it ends cancelled.
	Cancel
	// Lost: the attempt is no longer this runner's (or gone); it ends without a report.
	Lost
)

// RunsClient is the runs service's side of an attempt.
type RunsClient interface {
	// Claim makes the attempt this runner's. It reports false when the attempt is
	// someone else's, cancelled or gone, and an error when the runs service did not answer.
	Claim(ctx context.Context, taskRunID string, attempt int) (bool, error)
	// Heartbeat tells the runs service that runner still runs the attempt.
	Heartbeat(ctx context.Context, taskRunID string, attempt int, runner string) (Beat, error)
}

// Publisher sends one event and returns once the broker acknowledged it.
type Publisher interface {
	Publish(ctx context.Context, topic, key string, e event.Event) error
}

const (
	// stopGrace is how long an attempt stopped by the runner's shutdown may still spend
	// publishing its log and end.
	stopGrace = 5 * time.Second
	// publishTimeout bounds one publish.
	publishTimeout = 15 * time.Second
)

var errLost = errors.New("attempt lost")

// Options configure a Worker.
type Options struct {
	// ID names this runner instance to the runs service and in updates.
	ID string
	// WorkDir holds the attempts' workspaces; it must be absolute.
	WorkDir string
	// Concurrency is how many attempts run at once.
	Concurrency int
	// Heartbeat is the interval between heartbeats; zero means 5 s.
	Heartbeat time.Duration
	// MaxLog caps an attempt's log in bytes.
	MaxLog    int
	Runs      RunsClient
	Publisher Publisher
	// Executor picks the executor of a step; nil means always the process executor.
	Executor func(events.TaskSpec) executor.Executor
	// Sealer opens attempts that arrive sealed and seals the results that hold one of
	// their secrets; nil fails sealed attempts.
	Sealer events.Sealer
	Logger *slog.Logger
	// Meter makes the worker's instruments (metrics.go); nil takes the global provider.
	Meter metric.MeterProvider
	// TracerProvider makes the attempts' spans (traces.go); nil takes the global provider
	// when a span starts.
	TracerProvider trace.TracerProvider
}

// Worker executes attempts. Handle takes dispatches; Wait waits for the attempts started.
type Worker struct {
	opts Options
	log  *slog.Logger
	sem  chan struct{}
	wg   sync.WaitGroup

	journal *journal
	// lingering counts the reported attempts still beating (see linger).
	lingering sync.WaitGroup

	mu      sync.Mutex
	running map[string]bool

	metrics *metrics
}

// New returns a Worker.
func New(opts Options) *Worker {
	opts.Concurrency = max(opts.Concurrency, 1)
	opts.Heartbeat = cmp.Or(opts.Heartbeat, 5*time.Second)
	if opts.Executor == nil {
		process := &executor.Process{Logger: opts.Logger}
		opts.Executor = func(events.TaskSpec) executor.Executor { return process }
	}
	w := &Worker{
		opts:    opts,
		log:     cmp.Or(opts.Logger, slog.Default()),
		sem:     make(chan struct{}, opts.Concurrency),
		running: map[string]bool{},
		journal: newJournal(filepath.Join(opts.WorkDir, ".journal")),
	}
	w.metrics = newMetrics(opts.Meter, w)
	return w
}

// Handle is the kafkax handler of the dispatch topic. It claims the attempt and starts it,
// returning once it runs: while Concurrency attempts run, it waits for one to end. It
// returns an error, for the consumer to retry, only when the runs service did not answer.
// The attempt runs until it ends or ctx does.
func (w *Worker) Handle(ctx context.Context, e event.Event) error {
	d, err := events.Decode[events.TaskAttempt](e)
	if err != nil {
		return kafkax.Permanent(err)
	}
	if d.Type == tasktype.Generic {
		return nil
	}
	if !validID(d.TaskRunID) || d.Attempt < 1 {
		return kafkax.Permanent(fmt.Errorf("dispatch %s: invalid task run %q or attempt %d", e.ID(), d.TaskRunID, d.Attempt))
	}
	// An attempt this runner holds already (running, or reported and not yet applied) is
	// not claimed again: the runs service would grant it, as a lost answer asked again.
	if w.journal.has(d) || !w.start(ctx, d) {
		return ctx.Err()
	}
	// The claim is made beside the next dispatches rather than before them: a slow answer
	// from the runs service holds up only this attempt. Should the runner stop before
	// claiming, the runs service sends the attempt again once no one claimed it in time.
	w.wg.Go(func() {
		defer w.release(d)
		if !w.claim(ctx, d) {
			return
		}
		w.execute(ctx, journalEntry{Attempt: d, Runner: w.opts.ID}, false)
	})
	return nil
}

func key(d events.TaskAttempt) string { return fmt.Sprintf("%s/%d", d.TaskRunID, d.Attempt) }

// start takes a slot for attempt d; false when it runs here already (delivered again) or
// ctx ended first. A slot is taken before claiming: a claimed attempt must not wait
// without heartbeats.
func (w *Worker) start(ctx context.Context, d events.TaskAttempt) bool {
	w.mu.Lock()
	dup := w.running[key(d)]
	w.mu.Unlock()
	if dup {
		return false
	}
	select {
	case w.sem <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	w.mu.Lock()
	w.running[key(d)] = true
	w.mu.Unlock()
	return true
}

// release gives back the slot start took.
func (w *Worker) release(d events.TaskAttempt) {
	w.mu.Lock()
	delete(w.running, key(d))
	w.mu.Unlock()
	<-w.sem
}

// claim makes the attempt this runner's, trying again while the runs service does not
// answer; false when the attempt is not to be had or the runner stops.
func (w *Worker) claim(ctx context.Context, d events.TaskAttempt) bool {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		claimed, err := w.opts.Runs.Claim(ctx, d.TaskRunID, d.Attempt)
		if err == nil {
			if !claimed {
				w.log.Debug("attempt not claimed", "taskRunId", d.TaskRunID, "attempt", d.Attempt)
				return false
			}
			if err := w.journal.write(journalEntry{Attempt: d, Runner: w.opts.ID}); err != nil {
				w.log.Warn("cannot journal a claimed attempt", "taskRunId", d.TaskRunID, "err", err)
			}
			return true
		}
		w.log.Warn("claim failed; retrying", "taskRunId", d.TaskRunID, "attempt", d.Attempt, "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
}

// Wait returns once every attempt Handle started has ended and reported.
func (w *Worker) Wait() { w.wg.Wait() }

// WaitLingering returns once reported attempts stopped beating; they stop when the
// runs service applied their reports, or when the context Handle got ends.
func (w *Worker) WaitLingering() { w.lingering.Wait() }

func validID(id string) bool {
	return id != "" && filepath.IsLocal(id) && !strings.ContainsAny(id, `/\`)
}

func (w *Worker) workspace(d events.TaskAttempt) string {
	return filepath.Join(w.opts.WorkDir, fmt.Sprintf("%s-%d", d.TaskRunID, d.Attempt))
}

// execute runs a claimed attempt, or with resume follows one a previous process of the
// runner left (e.LogSeq and e.LogOffset say where its log stands), and reports it. ctx
// ending stops it: a step that can be followed later is left running, others end
// "runner stopped".
func (w *Worker) execute(ctx context.Context, e journalEntry, resume bool) {
	ctx, span := startExecute(ctx, w.tracer(), e.Attempt, resume)
	var out executor.Outcome
	defer func() { endExecute(span, out) }()
	// The attempt stays sealed in the journal; it is opened here, in memory only.
	d, openErr := e.Attempt.Opened(w.opts.Sealer)
	log := withTrace(w.log.With("taskRunId", d.TaskRunID, "runId", d.RunID, "attempt", d.Attempt), span)
	// The attempt's context carries why it stopped early: shutdown, cancel or loss.
	runCtx, stop := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stop(nil)
	defer context.AfterFunc(ctx, func() { stop(executor.ErrDetach) })()
	execCtx := runCtx
	if !d.Deadline.IsZero() {
		var cancel context.CancelFunc
		execCtx, cancel = context.WithDeadline(runCtx, d.Deadline)
		defer cancel()
	}
	pubCtx, cancelPub := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelPub()
	defer context.AfterFunc(ctx, func() { time.AfterFunc(stopGrace, cancelPub) })()

	from := e.LogOffset
	logs := logstream.New(pubCtx, logstream.Options{
		Secrets:  d.Secrets,
		Max:      w.opts.MaxLog,
		Logger:   log,
		FirstSeq: e.LogSeq,
		Send: func(ctx context.Context, seq int, chunk string) error {
			id := fmt.Sprintf("%s/%d/log/%d", d.TaskRunID, d.Attempt, seq)
			return w.publish(ctx, d, id, events.TaskUpdate{Kind: events.UpdateLog, Seq: seq, Log: chunk})
		},
		// Where the log stands goes to the journal, so a runner that starts again does not
		// send it twice.
		Drained: func(next int, written int64) {
			e.LogSeq, e.LogOffset = next, from+written
			if err := w.journal.write(e); err != nil {
				log.Warn("cannot journal the log's progress", "err", err)
			}
		},
	})
	// Beats end with the step: one still waiting on the runs service must not hold up
	// the report.
	beatCtx, stopBeats := context.WithCancel(runCtx)
	var beats sync.WaitGroup
	beats.Go(func() { w.heartbeat(beatCtx, d, e.Runner, stop, log) })

	step := executor.Step{Dir: w.workspace(d), Spec: d.Spec, Results: d.Results, TaskRunID: d.TaskRunID, Attempt: d.Attempt}
	exec := w.opts.Executor(d.Spec)
	switch r, ok := exec.(executor.Resumer); {
	case openErr != nil:
		log.Error("cannot open a sealed attempt", "err", openErr)
		out = executor.Outcome{Status: "failed", Message: "the runner cannot open the attempt: " + openErr.Error()}
	case ok && resume:
		log.Info("attempt followed")
		w.metrics.attemptStarted(exec)
		out = r.Resume(execCtx, step, logs, from)
	default:
		log.Info("attempt started")
		w.metrics.attemptStarted(exec)
		out = exec.Execute(execCtx, step, logs)
	}
	stopBeats()
	beats.Wait()
	cause := context.Cause(runCtx)
	if out.Detached || errors.Is(cause, errLost) {
		logs.Abort()
		logs.Close()
		if errors.Is(cause, errLost) {
			w.journal.done(d)
			log.Info("attempt lost to the runs service; not reported")
			w.metrics.attemptEnded(exec, "lost")
		} else {
			log.Info("runner stopped; the step goes on for its next start to follow")
			w.metrics.attemptEnded(exec, "detached")
		}
		return
	}
	logs.Close()
	out = w.guard(d, out)
	w.metrics.attemptEnded(exec, out.Status)
	// The step ended: from now on it must be reported, not run again. Its workspace, which
	// says so until then, goes once the journal does — after the report, which it would
	// only hold up; a runner stopping before then removes it when it starts again.
	e.Outcome = &out
	err := w.journal.write(e)
	journaled := err == nil
	if !journaled {
		log.Warn("cannot journal an attempt's outcome", "err", err)
	}
	// Beats go on while the report is sent, and until it is applied.
	w.lingering.Go(func() { w.linger(ctx, d, e.Runner) })
	for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
		err := w.report(pubCtx, d, out)
		if err == nil {
			break
		}
		// A runner that stops meanwhile reports it from its journal when it starts again.
		log.Error("publish attempt end; retrying", "status", out.Status, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
	if r, ok := exec.(executor.Resumer); ok && journaled {
		r.Release(step)
	}
	log.Info("attempt ended", "status", out.Status, "message", out.Message)
}

// guard keeps the attempt's secrets out of its outcome, before it is journaled or sent: a
// result holding one is sealed, for the runs service to open and treat as secret, and the
// message has them masked.
func (w *Worker) guard(d events.TaskAttempt, out executor.Outcome) executor.Outcome {
	if len(d.Secrets) == 0 {
		return out
	}
	mask := secrets.NewMasker(d.Secrets)
	out.Message = mask.Mask(out.Message)
	if len(out.Results) == 0 {
		return out
	}
	results := make(map[string]string, len(out.Results))
	for name, v := range out.Results {
		if mask.Mask(v) != v {
			sealed, err := "", errors.New("no secret key")
			if w.opts.Sealer != nil {
				sealed, err = w.opts.Sealer.Seal(v)
			}
			if err != nil {
				// Never sent in clear: masked, the value is lost.
				sealed = mask.Mask(v)
			}
			v = sealed
		}
		results[name] = v
	}
	out.Results = results
	return out
}

// report publishes how attempt d ended.
func (w *Worker) report(ctx context.Context, d events.TaskAttempt, out executor.Outcome) error {
	return w.publish(ctx, d, fmt.Sprintf("%s/%d/ended", d.TaskRunID, d.Attempt), events.TaskUpdate{
		Kind: events.UpdateEnded, Status: out.Status, ExitCode: out.ExitCode, Message: out.Message,
		Results: out.Results, Time: time.Now().UTC(),
	})
}

// lingerFor bounds how long a reported attempt keeps beating.
const lingerFor = 10 * time.Minute

// linger keeps beating for an attempt whose end is reported until the runs service has
// applied the report (it answers that the attempt is no longer running): a report waiting
// in the queue behind others must not look like a runner that went silent. The journal
// keeps the attempt until then, so a runner that stops meanwhile beats on for it when it
// starts again.
func (w *Worker) linger(ctx context.Context, d events.TaskAttempt, runner string) {
	bounded, cancel := context.WithTimeout(ctx, lingerFor)
	defer cancel()
	w.beat(bounded, d, runner, func(b Beat, err error) bool { return err != nil || b == Continue })
	if ctx.Err() == nil {
		w.journal.done(d)
	}
}

// heartbeat beats until ctx ends, and stops the attempt when the runs service says so.
func (w *Worker) heartbeat(ctx context.Context, d events.TaskAttempt, runner string, stop context.CancelCauseFunc, log *slog.Logger) {
	w.beat(ctx, d, runner, func(b Beat, err error) bool {
		switch {
		case err != nil:
			// The runs service tolerates a few missed beats; the next may get through.
			log.Warn("heartbeat", "err", err)
		case b == Cancel:
			stop(executor.ErrCancelled)
			return false
		case b == Lost:
			stop(errLost)
			return false
		}
		return true
	})
}

// beat sends the attempt's heartbeat every interval until ctx ends or on, given each
// answer, returns false.
func (w *Worker) beat(ctx context.Context, d events.TaskAttempt, runner string, on func(Beat, error) bool) {
	t := time.NewTicker(w.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		b, err := w.opts.Runs.Heartbeat(ctx, d.TaskRunID, d.Attempt, runner)
		if ctx.Err() != nil || !on(b, err) {
			return
		}
	}
}

func (w *Worker) publish(ctx context.Context, d events.TaskAttempt, id string, u events.TaskUpdate) error {
	u.TaskRunID, u.RunID, u.Attempt, u.Runner = d.TaskRunID, d.RunID, d.Attempt, w.opts.ID
	if u.Time.IsZero() {
		u.Time = time.Now().UTC()
	}
	e, err := events.New(id, events.Source("runner"), events.TypeTaskUpdate, "", u)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	return w.opts.Publisher.Publish(ctx, events.TaskUpdates, d.RunID, e)
}

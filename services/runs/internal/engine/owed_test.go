package engine

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// lossy stands for a broker that acknowledges the status events it is given and loses
// them while lose is set (an embedded broker that died with its process), and keeps the
// rest in pub.
type lossy struct {
	pub  *published
	mu   sync.Mutex
	lose bool
}

func (l *lossy) Publish(ctx context.Context, msgs []Message) error {
	l.mu.Lock()
	lose := l.lose
	l.mu.Unlock()
	var kept []Message
	for _, m := range msgs {
		if !lose || m.Topic != events.RunEvents {
			kept = append(kept, m)
		}
	}
	return l.pub.Publish(ctx, kept)
}

func (l *lossy) setLose(v bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lose = v
}

// startOwing runs replica name of h publishing to pub, sending what runs put away owe
// again after resend.
func startOwing(h *harness, name string, pub Publisher, resend time.Duration) *Engine {
	h.t.Helper()
	return h.startWith(name, pub, resend)
}

// statusSeqs lists the numbers of run's status events published so far, in the order
// they were, each with its id.
func statusSeqs(t *testing.T, p *published, run string) ([]int64, []string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var seqs []int64
	var ids []string
	for _, m := range p.msgs {
		if m.Topic != events.RunEvents || m.Key != run {
			continue
		}
		seq, ok := events.SeqOf(m.Event)
		require.True(t, ok, "status event %s has no number", m.Event.ID())
		seqs, ids = append(seqs, seq), append(ids, m.Event.ID())
	}
	return seqs, ids
}

// upTo is 1, 2, … n.
func upTo(n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i + 1)
	}
	return out
}

func oneScript() *domain.Definition {
	return &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil), script("work", "start"),
		task("end", tasktype.End, nil, "work")}}
}

// A run whose status events the broker lost, put away before any was said to be
// recorded, keeps them in the archive; the reconciler sends them again, in order and with
// their ids, until they are said to be recorded, and then no more.
func TestEngineSendsAgainTheEventsARunPutAwayOwes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	broker := &lossy{pub: h.pub, lose: true}
	e := startOwing(h, "a", broker, time.Minute)
	run := h.submit(e, oneScript())
	h.finish(e, run, "work", 1, domain.Succeeded, nil)
	h.ends(run, domain.Succeeded)
	seqs, _ := statusSeqs(t, broker.pub, run)
	require.Empty(t, seqs, "the broker lost every status event")

	r, _ := h.stored(run)
	require.NotEmpty(t, r.Owed, "the run put away keeps the events it owes")
	last := r.Owed[len(r.Owed)-1].Seq
	assert.Equal(t, upTo(last), seqsOf(r.Owed), "every status event of the run, numbered in order")

	broker.setLose(false)
	h.advance(2 * time.Minute)
	require.Eventually(t, func() bool { s, _ := statusSeqs(t, broker.pub, run); return len(s) == int(last) }, within, time.Millisecond)
	seqs, ids := statusSeqs(t, broker.pub, run)
	assert.Equal(t, upTo(last), seqs, "sent again in order")
	assert.Equal(t, run+"/succeeded/completed", ids[len(ids)-1], "the run's end last")

	// Said to be recorded, they are dropped from the archive and not sent again.
	e.Recorded(run, upTo(last))
	require.Eventually(t, func() bool {
		owed, err := h.store.FindOwed(context.Background(), h.clock.Now().Add(time.Hour), 10)
		return err == nil && len(owed) == 0
	}, within, time.Millisecond)
	h.advance(2 * time.Minute)
	h.advance(2 * time.Minute)
	seqs, _ = statusSeqs(t, broker.pub, run)
	assert.Len(t, seqs, int(last), "nothing sent again once recorded")
	r, _ = h.stored(run)
	assert.Empty(t, r.Owed)
}

// A replica that stops with its runs' status events lost sends them again when it starts:
// loading a run to settle it sends what it owes first, in order, before anything new.
// What is said to be recorded is then dropped from what its steps write.
func TestEngineSendsAgainWhatARunInFlightOwesOnRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	broker := &lossy{pub: h.pub, lose: true}
	e := startOwing(h, "a", broker, time.Minute)
	run := h.submit(e, oneScript())
	h.dispatched(run, "work", 1)
	h.stop("a")
	_, tasks := h.stored(run)
	var owed int64
	for _, t := range tasks {
		owed = max(owed, t.EventSeq)
	}
	require.Positive(t, owed, "the task runs keep the events of their changes")

	again := &published{}
	h.pub = again
	e = startOwing(h, "a", again, time.Minute)
	require.Eventually(t, func() bool { s, _ := statusSeqs(t, again, run); return len(s) >= int(owed) }, within, time.Millisecond)
	seqs, _ := statusSeqs(t, again, run)
	assert.Equal(t, upTo(owed), seqs[:owed], "what the run owed, sent again in order first")

	e.Recorded(run, upTo(owed))
	h.finish(e, run, "work", 1, domain.Succeeded, nil)
	h.ends(run, domain.Succeeded)
	seqs, ids := statusSeqs(t, again, run)
	assert.Equal(t, run+"/succeeded/completed", ids[len(ids)-1])
	r, tasks := h.stored(run)
	for _, o := range r.Owed {
		assert.Greater(t, o.Seq, owed, "an event said to be recorded is not kept")
	}
	assert.Equal(t, seqs[len(seqs)-1], r.Owed[len(r.Owed)-1].Seq)
	for _, t2 := range tasks {
		assert.Empty(t, t2.Owed, "a run put away keeps what it owes in its own record")
	}
}

func seqsOf(owed []domain.OwedEvent) []int64 {
	out := make([]int64, len(owed))
	for i, o := range owed {
		out[i] = o.Seq
	}
	return out
}

// A step another replica takes on a run whose owner died before sending its events sends
// them first, in order, before its own.
func TestEngineAStepOfAnotherReplicaSendsWhatTheRunOwesFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	broker := &lossy{pub: h.pub, lose: true}
	a := startOwing(h, "a", broker, time.Minute)
	run := h.submit(a, oneScript())
	h.dispatched(run, "work", 1)
	h.stop("a")
	r, _ := h.stored(run)
	require.Equal(t, "a", r.Owner)

	broker.setLose(false)
	b := startOwing(h, "b", broker, time.Minute)
	require.NoError(t, b.Step(context.Background(), run, func(m *domain.Machine) error {
		if !m.Claim(m.S.G.Index["work"], 1, "runner-1") {
			return assert.AnError
		}
		return nil
	}))
	// What the run owed goes out on the load, the claim's event once the step is stored.
	require.Eventually(t, func() bool {
		_, ids := statusSeqs(t, h.pub, run)
		return slices.Contains(ids, run+".1/1/running")
	}, within, time.Millisecond)
	seqs, ids := statusSeqs(t, h.pub, run)
	last := seqs[len(seqs)-1]
	assert.Equal(t, upTo(last), seqs, "what the run owed, then the claim's event, in order")
	assert.Equal(t, run+".1/1/running", ids[len(ids)-1])
}

package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// A step another replica stored on a run, whose events it never sent (it died first), goes
// out from the owner too: the owner that loads the run again to take its next step sends
// what the run owes before its own, so that every event is first sent in order.
func TestEngineOwnerSendsWhatAnotherReplicasStepOwesFirst(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := startOwing(h, "a", h.pub, 0)
	run := h.submit(a, oneScript())
	h.dispatched(run, "work", 1)

	// Replica b applies the claim and dies before its events leave it.
	lost := &lossy{pub: &published{}, lose: true}
	b := startOwing(h, "b", lost, 0)
	require.NoError(t, b.Step(context.Background(), run, func(m *domain.Machine) error {
		if !m.Claim(m.S.G.Index["work"], 1, "runner-1") {
			return assert.AnError
		}
		return nil
	}))
	h.stop("b")
	r, tasks := h.stored(run)
	require.Equal(t, "a", r.Owner)
	var claimed int64
	for _, t := range tasks {
		claimed = max(claimed, t.EventSeq)
	}
	require.Positive(t, claimed, "b stored the claim's event")

	require.NoError(t, a.Step(context.Background(), run, func(m *domain.Machine) error {
		if !m.Ended(m.S.G.Index["work"], 1, domain.Succeeded, "", nil, nil) {
			return assert.AnError
		}
		return nil
	}))
	h.ends(run, domain.Succeeded)
	seqs, ids := statusSeqs(t, h.pub, run)
	var first []int64
	seen := map[int64]bool{}
	for _, s := range seqs {
		if !seen[s] {
			seen[s] = true
			first = append(first, s)
		}
	}
	require.NotEmpty(t, first)
	assert.Equal(t, upTo(first[len(first)-1]), first, "every event, first sent in order: %v", ids)
	assert.Contains(t, ids, run+".1/1/running", "the claim's event, stored by b, sent by a")
}

// A replica that heard which of another replica's run's events are recorded sends, when a
// step of its own loads that run, only those not known to be recorded, and its own.
func TestEngineAStepOfAnotherReplicaSendsOnlyWhatIsNotKnownRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := startOwing(h, "a", h.pub, 0)
	run := h.submit(a, oneScript())
	h.dispatched(run, "work", 1)
	before, _ := statusSeqs(t, h.pub, run)
	require.NotEmpty(t, before)

	mine := &published{}
	b := startOwing(h, "b", mine, 0)
	b.Recorded(run, before)
	require.NoError(t, b.Step(context.Background(), run, func(m *domain.Machine) error {
		if !m.Claim(m.S.G.Index["work"], 1, "runner-1") {
			return assert.AnError
		}
		return nil
	}))
	require.Eventually(t, func() bool { s, _ := statusSeqs(t, mine, run); return len(s) > 0 }, within, time.Millisecond)
	seqs, ids := statusSeqs(t, mine, run)
	assert.Equal(t, []string{run + ".1/1/running"}, ids, "the claim's event alone: %v", seqs)
	r, _ := h.stored(run)
	for _, o := range r.Owed {
		assert.NotContains(t, before, o.Seq, "an event known to be recorded is not kept")
	}
}

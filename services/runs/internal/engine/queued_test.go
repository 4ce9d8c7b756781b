package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// An attempt goes to the claim of its queue waiting longest, one attempt per claim; a
// claim that leaves without taking what it was handed gets it back to requeue; with no
// claim waiting, nothing is handed.
func TestQueueSignalsHandAttemptsToWaitingClaims(t *testing.T) {
	t.Parallel()
	var s queueSignals
	q := func(id, queue string) domain.QueuedAttempt {
		return domain.QueuedAttempt{ID: id, Team: "infra", Queue: queue}
	}
	assert.False(t, s.offer(q("a-1", "deploy")), "no claim waits")

	first, _, doneFirst := s.await("infra", "deploy")
	_, _, doneSecond := s.await("infra", "deploy")
	_, _, doneOther := s.await("infra", "build")
	require.True(t, s.offer(q("a-1", "deploy")))
	require.True(t, s.offer(q("b-1", "deploy")))
	assert.False(t, s.offer(q("c-1", "deploy")), "each claim takes one attempt")
	assert.Equal(t, "a-1", (<-first).ID, "the claim waiting longest first")
	assert.Nil(t, doneFirst(), "taken")
	left := doneSecond()
	require.NotNil(t, left, "handed and not taken")
	assert.Equal(t, "b-1", left.ID)
	assert.Nil(t, doneOther())

	assert.True(t, s.handed("a-1"), "handed, never stored")
	assert.False(t, s.handed("a-1"), "asked once")
	s.forget("b-1")
	assert.False(t, s.handed("b-1"), "requeued: stored after all")
	assert.False(t, s.handed("c-1"))
}

// A claim is woken when an attempt of its queue is stored.
func TestQueueSignalsWakeOnStore(t *testing.T) {
	t.Parallel()
	var s queueSignals
	_, woken, done := s.await("infra", "deploy")
	defer done()
	s.fire("infra", "build")
	select {
	case <-woken:
		t.Fatal("woken by another queue")
	default:
	}
	s.fire("infra", "deploy")
	_, ok := <-woken
	assert.False(t, ok, "closed")
}

// One claim at a time reads a queue in the store: the first asking, then none until the
// look is due again or something was stored there.
func TestQueueSignalsLookOncePerInterval(t *testing.T) {
	t.Parallel()
	var s queueSignals
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	every := 500 * time.Millisecond
	assert.True(t, s.look("infra", "deploy", now, every), "never looked")
	assert.False(t, s.look("infra", "deploy", now.Add(100*time.Millisecond), every), "looked just now")
	assert.True(t, s.look("infra", "build", now, every), "another queue")
	s.fire("infra", "deploy")
	assert.True(t, s.look("infra", "deploy", now.Add(200*time.Millisecond), every), "something was stored")
	assert.False(t, s.look("infra", "deploy", now.Add(300*time.Millisecond), every))
	assert.True(t, s.look("infra", "deploy", now.Add(700*time.Millisecond), every), "due again")
}

// A queue nothing waits on, with nothing known stored there, is forgotten: claims on
// queues of any name leave nothing behind.
func TestQueueSignalsForgetIdleQueues(t *testing.T) {
	t.Parallel()
	var s queueSignals
	for _, q := range []string{"a", "b", "c"} {
		_, _, done := s.await("infra", q)
		done()
	}
	assert.Empty(t, s.queues)
	_, _, done := s.await("infra", "kept")
	s.fire("infra", "kept")
	done()
	assert.Len(t, s.queues, 1, "something was stored there: the next claim must read it")
}

package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/tasktype"
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

	first, _, doneFirst := s.await("infra", "deploy", "w")
	_, _, doneSecond := s.await("infra", "deploy", "w")
	_, _, doneOther := s.await("infra", "build", "w")
	require.True(t, s.offer(q("a-1", "deploy")))
	require.True(t, s.offer(q("b-1", "deploy")))
	assert.False(t, s.offer(q("c-1", "deploy")), "each claim takes one attempt")
	assert.Equal(t, "a-1", (<-first).Q.ID, "the claim waiting longest first")
	assert.Nil(t, doneFirst(), "taken")
	left := doneSecond()
	require.NotNil(t, left, "handed and not taken")
	assert.Equal(t, "b-1", left.Q.ID)
	assert.Nil(t, doneOther())

	assert.True(t, s.handed("a-1"), "handed, never stored")
	assert.False(t, s.handed("a-1"), "asked once")
	s.forget("b-1")
	assert.False(t, s.handed("b-1"), "requeued: stored after all")
	assert.False(t, s.handed("c-1"))
}

// An attempt a claim read from the store's queue beside the one it took goes to another
// claim waiting, as stored: the step that claims it takes it out of the store's queue.
func TestQueueSignalsHandOnWhatAClaimRead(t *testing.T) {
	t.Parallel()
	var s queueSignals
	q := domain.QueuedAttempt{ID: "a-1", Team: "infra", Queue: "deploy"}
	assert.False(t, s.offerStored(q), "no claim waits")
	ch, _, done := s.await("infra", "deploy", "w")
	require.True(t, s.offerStored(q))
	h := <-ch
	assert.Equal(t, "a-1", h.Q.ID)
	assert.True(t, h.Stored)
	assert.Nil(t, h.Claimed)
	assert.Nil(t, done(), "taken")
	assert.False(t, s.handed("a-1"), "stored: its claim's step deletes it from the store's queue")
	assert.False(t, s.offerStored(q), "the claim left the waiters")
}

// A claim is woken when an attempt of its queue is stored.
func TestQueueSignalsWakeOnStore(t *testing.T) {
	t.Parallel()
	var s queueSignals
	_, woken, done := s.await("infra", "deploy", "w")
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
		_, _, done := s.await("infra", q, "w")
		done()
	}
	assert.Empty(t, s.queues)
	_, _, done := s.await("infra", "kept", "w")
	s.fire("infra", "kept")
	done()
	assert.Len(t, s.queues, 1, "something was stored there: the next claim must read it")
}

// A claim taken for a step that claims an attempt for it is handed that attempt once the
// step settles; a claim leaving meanwhile waits for the step, and gets what it claimed;
// a step that stored nothing lets the claim wait again, first in line, unless it left.
func TestQueueSignalsReserveForAClaimOnDispatch(t *testing.T) {
	t.Parallel()
	var s queueSignals
	claimed := func(id string) *Handoff {
		return &Handoff{Q: domain.QueuedAttempt{ID: id, Team: "infra", Queue: "deploy"}, Claimed: &events.TaskAttempt{TaskRunID: id}}
	}

	first, _, doneFirst := s.await("infra", "deploy", "w1")
	second, _, doneSecond := s.await("infra", "deploy", "w2")
	w := s.reserve("infra", "deploy")
	require.NotNil(t, w)
	assert.Equal(t, "w1", w.runner, "the claim waiting longest")
	s.settle(w, claimed("a-1"))
	got := <-first
	require.NotNil(t, got.Claimed)
	assert.Equal(t, "a-1", got.Claimed.TaskRunID)
	assert.Nil(t, doneFirst(), "taken")
	assert.False(t, s.handed("a-1"), "a claimed attempt is never stored: nothing to remember")

	// Nothing stored: w2 waits again, first in line.
	w = s.reserve("infra", "deploy")
	require.NotNil(t, w)
	assert.Nil(t, s.reserve("infra", "deploy"), "none waits while reserved")
	s.settle(w, nil)
	assert.Same(t, w, s.reserve("infra", "deploy"), "waiting again")

	// Leaving during the step: done waits for it, and answers what it claimed.
	left := make(chan *Handoff)
	go func() { left <- doneSecond() }()
	select {
	case <-left:
		t.Fatal("done answered before the step settled")
	case <-time.After(20 * time.Millisecond):
	}
	s.settle(w, claimed("b-1"))
	h := <-left
	require.NotNil(t, h)
	assert.Equal(t, "b-1", h.Claimed.TaskRunID)
	select {
	case <-second:
		t.Fatal("taken twice")
	default:
	}

	// A claim that left is not put back when its step stores nothing.
	_, _, doneThird := s.await("infra", "deploy", "w3")
	w = s.reserve("infra", "deploy")
	go func() { left <- doneThird() }()
	require.Eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return w.left }, within, time.Millisecond)
	s.settle(w, nil)
	assert.Nil(t, <-left)
	assert.Nil(t, s.reserve("infra", "deploy"), "it left")
}

// A generic attempt dispatched while a worker's claim waits on its queue is claimed for
// it by the dispatching write itself: handed claimed, stored running with the worker's
// name, neither queued in the store nor sent to the queue's topic; its end ends the run.
func TestDispatchClaimsForAWaitingWorker(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.queues = true
	e := h.start("r1")
	const worker = "queue:infra/deploy/w1"
	ch, _, done := e.AwaitQueued("infra", "deploy", worker)
	run := h.submit(e, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		task("build", tasktype.Generic, map[string]any{"queue": "deploy"}, "start"), task("end", tasktype.End, nil, "build")}})

	var got Handoff
	select {
	case got = <-ch:
	case <-time.After(within):
		t.Fatal("nothing handed to the waiting claim")
	}
	assert.Nil(t, done())
	require.NotNil(t, got.Claimed, "claimed by the dispatch")
	assert.Equal(t, "build", got.Claimed.Name)
	_, tasks := h.stored(run)
	var build *domain.TaskRun
	for _, tr := range tasks {
		if tr.Name == "build" {
			build = tr
		}
	}
	require.NotNil(t, build)
	assert.Equal(t, domain.Running, build.Status)
	assert.Equal(t, worker, build.Runner)
	queued, err := h.store.FindQueued(context.Background(), "infra", "deploy", 10)
	require.NoError(t, err)
	assert.Empty(t, queued)
	h.pub.mu.Lock()
	for _, m := range h.pub.msgs {
		assert.NotEqual(t, events.QueueTopic("deploy"), m.Topic, "sent to the queue's topic")
	}
	h.pub.mu.Unlock()

	require.NoError(t, e.Step(context.Background(), run, func(m *domain.Machine) error {
		if !m.Ended(m.S.G.Index["build"], got.Claimed.Attempt, domain.Succeeded, "", nil, nil) {
			return fmt.Errorf("not ended")
		}
		return nil
	}))
	h.ends(run, domain.Succeeded)
}

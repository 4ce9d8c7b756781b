package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

const sink = "http://sink.example/events?token=t"

// deliveryQueue walks one queue through its life: recorded twice, claimed, held against
// another replica, postponed, advanced to empty, and deleted only when nothing was
// recorded since it was read.
func deliveryQueue(t *testing.T, all Stores) {
	s := all.Deliveries
	ctx := context.Background()
	now := at
	qid := domain.QueueID(sink, "run1")

	got, err := s.FindQueue(ctx, qid)
	require.NoError(t, err)
	assert.Nil(t, got)

	q := &domain.Queue{ID: qid, Sink: sink, Run: "run1", Gen: "g1", Next: 1}
	q.Append("e1")
	require.NoError(t, s.CreateQueue(ctx, q))
	assert.ErrorIs(t, s.CreateQueue(ctx, &domain.Queue{ID: qid, Sink: sink, Run: "run1", Gen: "g2", Next: 1}), domain.ErrQueueChanged)
	require.NoError(t, s.PutEvent(ctx, domain.Event{Queue: qid, Gen: "g1", Seq: 1, EventID: "e1", Body: []byte(`{"id":"e1"}`), Recorded: now}))
	// Stored again (a redelivery): the first stays.
	require.NoError(t, s.PutEvent(ctx, domain.Event{Queue: qid, Gen: "g1", Seq: 1, EventID: "e1", Body: []byte(`{"id":"other"}`), Recorded: now}))

	stale, err := s.FindQueue(ctx, qid)
	require.NoError(t, err)
	e2 := domain.Event{Queue: qid, Gen: "g1", Seq: q.Append("e2"), EventID: "e2", Body: []byte(`{"id":"e2"}`), Recorded: now}
	require.NoError(t, s.SaveRecorded(ctx, q, &e2))
	stale.Append("e3")
	assert.ErrorIs(t, s.SaveRecorded(ctx, stale, nil), domain.ErrQueueChanged, "a recorder that read before the last write loses")

	got, err = s.FindQueue(ctx, qid)
	require.NoError(t, err)
	assert.Equal(t, int64(2), got.Last)
	assert.Equal(t, []domain.Recorded{{EventID: "e1", Seq: 1}, {EventID: "e2", Seq: 2}}, got.Recent)
	assert.Equal(t, map[int64]domain.Event{2: e2}, got.Inline, "the queue holds e2 itself")

	ev, err := s.FindEvent(ctx, qid, "g1", 1)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"e1"}`, string(ev.Body))
	assert.Equal(t, now, ev.Recorded)
	_, err = s.FindEvent(ctx, qid, "g1", 2)
	assert.ErrorIs(t, err, domain.ErrEventMissing)

	due, err := s.FindDueQueues(ctx, "a", now, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{qid}, due)

	held, err := s.ClaimQueue(ctx, qid, "a", now, now.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, "a", held.Owner)
	_, err = s.ClaimQueue(ctx, qid, "b", now.Add(30*time.Second), now.Add(time.Minute))
	assert.ErrorIs(t, err, domain.ErrQueueNotHeld, "held by a until its lease lapses")
	due, err = s.FindDueQueues(ctx, "b", now, 10)
	require.NoError(t, err)
	assert.Empty(t, due)
	assert.ErrorIs(t, s.PostponeQueue(ctx, qid, "b", 1, now, "x", now), domain.ErrQueueNotHeld)

	require.NoError(t, s.PostponeQueue(ctx, qid, "a", 1, now.Add(time.Second), "the sink answered 500", now.Add(time.Minute)))
	got, err = s.FindQueue(ctx, qid)
	require.NoError(t, err)
	assert.Equal(t, 1, got.Attempt)
	assert.Equal(t, now.Add(time.Second), got.Due)
	assert.Equal(t, "the sink answered 500", got.LastError)
	due, err = s.FindDueQueues(ctx, "a", now, 10)
	require.NoError(t, err)
	assert.Empty(t, due, "not due before its retry")

	got, err = s.AdvanceQueue(ctx, qid, "a", 1, now.Add(5*time.Second), now.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, int64(2), got.Next)
	assert.Zero(t, got.Attempt)
	assert.Empty(t, got.LastError)
	assert.Equal(t, now.Add(5*time.Second), got.Due)
	assert.False(t, got.Empty())
	_, err = s.AdvanceQueue(ctx, qid, "a", 1, now, now.Add(time.Minute))
	assert.ErrorIs(t, err, domain.ErrQueueNotHeld, "past seq 1 already")
	_, err = s.AdvanceQueue(ctx, qid, "b", 2, now, now.Add(time.Minute))
	assert.ErrorIs(t, err, domain.ErrQueueNotHeld)
	got, err = s.AdvanceQueue(ctx, qid, "a", 2, now, now.Add(time.Minute))
	require.NoError(t, err)
	assert.True(t, got.Empty())
	assert.Empty(t, got.Inline, "a delivered event leaves its queue")

	// A recorder writes between the read and the delete: the queue stays.
	q.Append("e3")
	require.NoError(t, s.SaveRecorded(ctx, q, nil))
	assert.ErrorIs(t, s.DeleteQueue(ctx, got, "a"), domain.ErrQueueChanged)
	got, err = s.FindQueue(ctx, qid)
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.ErrorIs(t, s.DeleteQueue(ctx, got, "b"), domain.ErrQueueChanged, "only its holder deletes it")
	require.NoError(t, s.DeleteQueue(ctx, got, "a"))
	got, err = s.FindQueue(ctx, qid)
	require.NoError(t, err)
	assert.Nil(t, got)
}

// deliveryTakeover: a replica that stopped holding a queue leaves it to another once its
// lease lapses, or at once when it let go at shutdown; the other finds it by polling and
// reads the events the first left.
func deliveryTakeover(t *testing.T, all Stores) {
	s := all.Deliveries
	ctx := context.Background()
	now := at
	for _, run := range []string{"r1", "r2"} {
		qid := domain.QueueID(sink, run)
		q := &domain.Queue{ID: qid, Sink: sink, Run: run, Gen: "g", Next: 1}
		q.Append(run + "-e1")
		require.NoError(t, s.CreateQueue(ctx, q))
		require.NoError(t, s.PutEvent(ctx, domain.Event{Queue: qid, Gen: "g", Seq: 1, EventID: run + "-e1", Body: []byte(`{}`), Recorded: now}))
		_, err := s.ClaimQueue(ctx, qid, "first", now, now.Add(30*time.Second))
		require.NoError(t, err)
	}
	due, err := s.FindDueQueues(ctx, "second", now.Add(10*time.Second), 10)
	require.NoError(t, err)
	assert.Empty(t, due)
	due, err = s.FindDueQueues(ctx, "second", now.Add(31*time.Second), 10)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{domain.QueueID(sink, "r1"), domain.QueueID(sink, "r2")}, due)

	require.NoError(t, s.ReleaseQueues(ctx, "first"))
	due, err = s.FindDueQueues(ctx, "second", now.Add(time.Second), 10)
	require.NoError(t, err)
	assert.Len(t, due, 2, "let go of: free at once")
	q, err := s.ClaimQueue(ctx, due[0], "second", now.Add(time.Second), now.Add(time.Minute))
	require.NoError(t, err)
	ev, err := s.FindEvent(ctx, q.ID, q.Gen, q.Next)
	require.NoError(t, err)
	assert.Equal(t, q.Run+"-e1", ev.EventID)
}

// deliveryClaimRace: of replicas claiming one queue at once, one holds it.
func deliveryClaimRace(t *testing.T, all Stores) {
	s := all.Deliveries
	ctx := context.Background()
	now := at
	qid := domain.QueueID(sink, "run")
	require.NoError(t, s.CreateQueue(ctx, &domain.Queue{ID: qid, Sink: sink, Run: "run", Gen: "g", Next: 1}))
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for _, owner := range []string{"a", "b", "c", "d"} {
		wg.Go(func() {
			_, err := s.ClaimQueue(ctx, qid, owner, now, now.Add(time.Minute))
			if err != nil && !errors.Is(err, domain.ErrQueueNotHeld) {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				won++
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, won)
}

// deliveryDropAndPurge: a dropped queue takes its events with it; the purge removes old
// failures and records left behind, and keeps the rest.
func deliveryDropAndPurge(t *testing.T, all Stores) {
	s := all.Deliveries
	ctx := context.Background()
	now := at
	qid := domain.QueueID(sink, "run")
	require.NoError(t, s.CreateQueue(ctx, &domain.Queue{ID: qid, Sink: sink, Run: "run", Gen: "g", Next: 1, Last: 2}))
	for seq := range int64(2) {
		require.NoError(t, s.PutEvent(ctx, domain.Event{Queue: qid, Gen: "g", Seq: seq + 1, EventID: "e", Body: []byte(`{}`), Recorded: now}))
	}
	_, err := s.ClaimQueue(ctx, qid, "a", now, now.Add(time.Minute))
	require.NoError(t, err)
	require.NoError(t, s.DropQueue(ctx, qid, "a"))
	q, err := s.FindQueue(ctx, qid)
	require.NoError(t, err)
	assert.Nil(t, q)
	_, err = s.FindEvent(ctx, qid, "g", 1)
	assert.ErrorIs(t, err, domain.ErrEventMissing)

	for i, at := range []time.Time{now.Add(-48 * time.Hour), now} {
		id := domain.EventKey(qid, "old", int64(i))
		require.NoError(t, s.PutEvent(ctx, domain.Event{Queue: qid, Gen: "old", Seq: int64(i), EventID: id, Body: []byte(`{}`), Recorded: at}))
		require.NoError(t, s.AddFailure(ctx, domain.Failure{ID: id, Sink: sink, Run: "run", EventID: id, Body: []byte(`{}`),
			Attempts: 3, Reason: "the sink answered 500", Recorded: at, GivenUp: at}))
	}
	require.NoError(t, s.Purge(ctx, now.Add(-24*time.Hour), now.Add(-24*time.Hour)))
	fails, err := s.FindFailures(ctx, "run")
	require.NoError(t, err)
	require.Len(t, fails, 1)
	assert.Equal(t, now, fails[0].GivenUp)
	assert.Equal(t, 3, fails[0].Attempts)
	_, err = s.FindEvent(ctx, qid, "old", 0)
	assert.ErrorIs(t, err, domain.ErrEventMissing)
	_, err = s.FindEvent(ctx, qid, "old", 1)
	assert.NoError(t, err)
}

// deliveryConcurrentWrites: records, advances and deletes of many queues at once (which
// a store may write together) each still hold to their own condition: of two writes on
// one version, or two advances past one event, one wins.
func deliveryConcurrentWrites(t *testing.T, all Stores) {
	s := all.Deliveries
	ctx := context.Background()
	now := at
	const n = 24
	queues := make([]*domain.Queue, n)
	for i := range n {
		q := &domain.Queue{ID: domain.QueueID(sink, fmt.Sprint("run", i)), Sink: sink, Run: fmt.Sprint("run", i), Gen: "g", Next: 1}
		q.Append("e1")
		require.NoError(t, s.CreateQueue(ctx, q))
		queues[i] = q
	}
	var wg sync.WaitGroup
	var won, lost atomic.Int64
	// tally counts err as a win, a loss (an error that is lose) or the test's failure.
	tally := func(err, lose error) bool {
		switch {
		case err == nil:
			won.Add(1)
			return true
		case errors.Is(err, lose):
			lost.Add(1)
		default:
			t.Error(err)
		}
		return false
	}
	for _, q := range queues {
		for _, id := range []string{"mine", "theirs"} {
			c := *q
			c.Recent = slices.Clone(q.Recent)
			wg.Go(func() {
				e := domain.Event{Queue: c.ID, Gen: "g", Seq: c.Append(id), EventID: id, Body: []byte(`{}`), Recorded: now}
				tally(s.SaveRecorded(ctx, &c, &e), domain.ErrQueueChanged)
			})
		}
	}
	wg.Wait()
	assert.EqualValues(t, n, won.Load())
	assert.EqualValues(t, n, lost.Load())
	for _, q := range queues {
		got, err := s.FindQueue(ctx, q.ID)
		require.NoError(t, err)
		assert.Equal(t, int64(2), got.Last)
		assert.Len(t, got.Inline, 1, "the winner's event, alone")
		_, err = s.ClaimQueue(ctx, q.ID, "a", now, now.Add(time.Minute))
		require.NoError(t, err)
	}
	won.Store(0)
	lost.Store(0)
	for _, q := range queues {
		for range 2 {
			wg.Go(func() {
				got, err := s.AdvanceQueue(ctx, q.ID, "a", 1, now, now.Add(time.Minute))
				if tally(err, domain.ErrQueueNotHeld) {
					assert.Equal(t, int64(2), got.Next)
				}
			})
		}
	}
	wg.Wait()
	assert.EqualValues(t, n, won.Load())
	assert.EqualValues(t, n, lost.Load())

	won.Store(0)
	lost.Store(0)
	for _, q := range queues {
		for _, v := range []int64{2, 1} {
			wg.Go(func() {
				tally(s.DeleteQueue(ctx, &domain.Queue{ID: q.ID, Version: v}, "a"), domain.ErrQueueChanged)
			})
		}
	}
	wg.Wait()
	assert.EqualValues(t, n, won.Load(), "the deletes at the queue's version")
	assert.EqualValues(t, n, lost.Load())
	due, err := s.FindDueQueues(ctx, "a", now.Add(time.Hour), 100)
	require.NoError(t, err)
	assert.Empty(t, due)
}

// durable: what every store answered as written — a queue's count, its place, the events
// it holds and those stored apart, failures, chat installs, links and signatures seen,
// installations, delivery records and receipts — is what a process started anew finds.
// A recorder or deliverer that died between two writes resumes from there.
func durable(t *testing.T, h Harness) {
	s := h.New(t)
	ctx := context.Background()
	now := at
	qid := domain.QueueID(sink, "run")
	q := &domain.Queue{ID: qid, Sink: sink, Run: "run", Gen: "g", Next: 1}
	e1 := domain.Event{Queue: qid, Gen: "g", Seq: q.Append("e1"), EventID: "e1", Body: []byte(`{"id":"e1"}`), Recorded: now}
	q.Inline = map[int64]domain.Event{1: e1}
	require.NoError(t, s.Deliveries.CreateQueue(ctx, q))
	e2 := domain.Event{Queue: qid, Gen: "g", Seq: q.Append("e2"), EventID: "e2", Body: []byte(`{"id":"e2"}`), Recorded: now}
	require.NoError(t, s.Deliveries.SaveRecorded(ctx, q, &e2))
	e3 := domain.Event{Queue: qid, Gen: "g", Seq: q.Append("e3"), EventID: "e3", Body: []byte(`{"id":"e3"}`), Recorded: now}
	require.NoError(t, s.Deliveries.SaveRecorded(ctx, q, nil))
	require.NoError(t, s.Deliveries.PutEvent(ctx, e3))
	_, err := s.Deliveries.ClaimQueue(ctx, qid, "a", now, now.Add(time.Minute))
	require.NoError(t, err)
	before, err := s.Deliveries.AdvanceQueue(ctx, qid, "a", 1, now.Add(time.Second), now.Add(time.Minute))
	require.NoError(t, err)
	failure := domain.Failure{ID: domain.EventKey(qid, "old", 1), Sink: sink, Run: "run", EventID: "e0", Body: []byte(`{"id":"e0"}`),
		Attempts: 7, Reason: "the sink answered 503", Recorded: now.Add(-time.Hour), GivenUp: now}
	require.NoError(t, s.Deliveries.AddFailure(ctx, failure))

	install := domain.ChatInstall{WorkspaceID: "T1", WorkspaceName: "Acme", BotUserID: "UBOT", BotToken: "xoxb-kept", Scope: "chat:write", InstalledAt: now}
	require.NoError(t, s.Chat.SaveChatInstall(ctx, install))
	fresh, err := s.Chat.FirstSignature(ctx, "v0=seen", now.Add(5*time.Minute))
	require.NoError(t, err)
	require.True(t, fresh)
	linked, err := s.CodeHost.UpdateInstallation(ctx, 7, func(in *domain.Installation) error {
		in.Known, in.Status, in.Team, in.LinkedBy, in.LinkedAt, in.Updated = true, domain.InstallationActive, "ops", "u1", now, now
		return nil
	})
	require.NoError(t, err)
	delivery := domain.Delivery{ID: "d1", Event: "push", Installation: 7, Received: now, Runs: []domain.DeliveryRun{{Team: "ops", Workflow: "build", Key: "k"}}}
	require.NoError(t, s.CodeHost.CreateDelivery(ctx, delivery))
	require.NoError(t, s.Receipts.CreateReceipt(ctx, receipt("event:k", "r1", now), now.Add(-time.Hour)))

	r := h.Reopen(t, s)
	after, err := r.Deliveries.FindQueue(ctx, qid)
	require.NoError(t, err)
	require.NotNil(t, after)
	assert.Equal(t, before.Last, after.Last)
	assert.Equal(t, before.Next, after.Next, "the place of its delivery")
	assert.Equal(t, before.Recent, after.Recent)
	assert.Equal(t, before.Version, after.Version)
	assert.Equal(t, before.Due, after.Due)
	assert.Equal(t, map[int64]domain.Event{2: e2}, after.Inline, "delivered e1 is gone, e2 is held")
	got, err := r.Deliveries.FindEvent(ctx, qid, "g", 3)
	require.NoError(t, err)
	assert.Equal(t, e3, got)
	fails, err := r.Deliveries.FindFailures(ctx, "run")
	require.NoError(t, err)
	assert.Equal(t, []domain.Failure{failure}, fails)

	gotInstall, err := r.Chat.FindChatInstall(ctx, "T1")
	require.NoError(t, err)
	assert.Equal(t, install, gotInstall)
	fresh, err = r.Chat.FirstSignature(ctx, "v0=seen", now.Add(5*time.Minute))
	require.NoError(t, err)
	assert.False(t, fresh, "a replay after a restart is still a replay")
	gotLinked, err := r.CodeHost.FindInstallation(ctx, 7)
	require.NoError(t, err)
	assert.Equal(t, linked, gotLinked)
	gotDelivery, found, err := r.CodeHost.FindDelivery(ctx, "d1")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, delivery, gotDelivery)
	gotReceipt, found, err := r.Receipts.FindReceipt(ctx, "event:k", now.Add(-time.Hour))
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "r1", gotReceipt.Run.ID)
}

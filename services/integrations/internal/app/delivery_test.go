package app_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

const (
	sinkA = "http://a.example/events"
	sinkB = "http://b.example/events?token=secret"
	sinkC = "http://c.example/events"
	wait  = 10 * time.Second
	tick  = time.Millisecond
)

// fast retries quickly, so tests that do not look at the schedule finish soon.
var fast = app.DeliveryConfig{Poll: 20 * time.Millisecond, Idle: 20 * time.Millisecond, Retry: domain.Retry{First: time.Millisecond, Max: 4 * time.Millisecond, GiveUpAfter: time.Hour}}

var ids atomic.Int64

// deliveries returns replica owner's deliveries over store, and a func that runs them
// until the returned stop is called (or the test ends).
func deliveries(t *testing.T, cfg app.DeliveryConfig, owner string, store *memStore, set *sinks, send *sender, now func() time.Time) (*app.Deliveries, func() (stop func())) {
	t.Helper()
	d := app.NewDeliveries(cfg, app.DeliveryDeps{Store: store, Settings: set, Sender: send, Now: now, Owner: owner,
		NewID: func() string { return fmt.Sprintf("g%d", ids.Add(1)) }})
	start := func() func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		var once sync.Once
		stop := func() {
			once.Do(func() {
				cancel()
				require.NoError(t, <-done)
			})
		}
		t.Cleanup(stop)
		return stop
	}
	return d, start
}

func record(t *testing.T, d *app.Deliveries, e event.Event) {
	t.Helper()
	require.NoError(t, d.Record(context.Background(), e))
}

func idsOf(run string, from, to int) []string {
	var out []string
	for n := from; n < to; n++ {
		out = append(out, fmt.Sprintf("%s/%d", run, n))
	}
	return out
}

// TestDeliveryInOrderPerRun: every sink gets every run's events in the order recorded,
// one that fails every first attempt too; delivered queues and events are deleted.
func TestDeliveryInOrderPerRun(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	tried := map[string]bool{}
	send := newSender(func(_ context.Context, sink, id string) error {
		mu.Lock()
		defer mu.Unlock()
		if sink == sinkB && !tried[id] {
			tried[id] = true
			return errDown
		}
		return nil
	})
	store, set := newMemStore(), &sinks{}
	set.set(sinkA, sinkB)
	d, start := deliveries(t, fast, "r1", store, set, send, time.Now)
	start()
	const runs, each = 5, 20
	for n := range each {
		for r := range runs {
			record(t, d, statusEvent(fmt.Sprintf("run%d", r), n))
		}
	}
	require.Eventually(t, func() bool { return len(send.received(sinkA)) == runs*each && len(send.received(sinkB)) == runs*each }, wait, tick)
	for r := range runs {
		run := fmt.Sprintf("run%d", r)
		assert.Equal(t, idsOf(run, 0, each), send.ofRun(sinkA, run), run)
		assert.Equal(t, idsOf(run, 0, each), send.ofRun(sinkB, run), run)
	}
	require.Eventually(t, func() bool { q, e := store.size(); return q == 0 && e == 0 }, wait, tick, "delivered records are deleted")
}

// TestDeliveryBackoff: a failed attempt is tried again after the schedule's wait, doubling
// up to its cap, and the run's next event waits behind it.
func TestDeliveryBackoff(t *testing.T) {
	t.Parallel()
	const failures = 6
	var tries atomic.Int64
	send := newSender(func(_ context.Context, _, id string) error {
		if id == "run/0" && tries.Add(1) <= failures {
			return errDown
		}
		return nil
	})
	store, set := newMemStore(), &sinks{}
	set.set(sinkA)
	c := testkit.NewClock(time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC))
	retry := domain.Retry{First: 100 * time.Millisecond, Max: time.Second, GiveUpAfter: time.Hour}
	d, start := deliveries(t, app.DeliveryConfig{Poll: time.Hour, Retry: retry}, "r1", store, set, send, c.Now)
	record(t, d, statusEvent("run", 0))
	record(t, d, statusEvent("run", 1))
	start()
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	for n := 1; n <= failures; n++ {
		require.Eventually(t, func() bool { return len(store.attempts()) == n }, wait, tick, "attempt %d", n)
		a := store.attempts()[n-1]
		assert.Equal(t, n, a.attempt)
		assert.Equal(t, want[n-1], a.due.Sub(c.Now()), "wait after attempt %d", n)
		assert.Empty(t, send.received(sinkA), "the run's next event waits")
		c.Set(a.due)
		d.Wake(a.queue)
	}
	require.Eventually(t, func() bool { return len(send.received(sinkA)) == 2 }, wait, tick)
	assert.Equal(t, []string{"run/0", "run/1"}, send.received(sinkA))
	assert.Empty(t, store.failed())
}

// TestDeliveryGivesUp: an event still failing GiveUpAfter after it was recorded is given
// up, kept as a failure with its attempts and last error, and the run's next event goes.
func TestDeliveryGivesUp(t *testing.T) {
	t.Parallel()
	send := newSender(func(_ context.Context, _, id string) error {
		if id == "run/0" {
			return errDown
		}
		return nil
	})
	store, set := newMemStore(), &sinks{}
	set.set(sinkA)
	t0 := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	c := testkit.NewClock(t0)
	retry := domain.Retry{First: time.Second, Max: 4 * time.Second, GiveUpAfter: 10 * time.Second}
	d, start := deliveries(t, app.DeliveryConfig{Poll: time.Hour, Retry: retry}, "r1", store, set, send, c.Now)
	record(t, d, statusEvent("run", 0))
	record(t, d, statusEvent("run", 1))
	start()
	// Attempts at 0s, 1s, 3s, 7s and 11s: the last is past 10s, and the event is given up.
	for n := 1; n <= 4; n++ {
		require.Eventually(t, func() bool { return len(store.attempts()) == n }, wait, tick, "attempt %d", n)
		a := store.attempts()[n-1]
		c.Set(a.due)
		d.Wake(a.queue)
	}
	assert.Equal(t, t0.Add(11*time.Second), c.Now())
	require.Eventually(t, func() bool { return len(store.failed()) == 1 }, wait, tick)
	f := store.failed()[0]
	assert.Equal(t, "run/0", f.EventID)
	assert.Equal(t, 5, f.Attempts)
	assert.Equal(t, errDown.Error(), f.Reason)
	assert.Equal(t, sinkA, f.Sink)
	assert.Equal(t, "run", f.Run)
	assert.Equal(t, t0.Add(11*time.Second), f.GivenUp)
	require.Eventually(t, func() bool { return len(send.received(sinkA)) == 1 }, wait, tick)
	assert.Equal(t, []string{"run/1"}, send.received(sinkA))
}

// TestDeliverySinksChange: with no sinks nothing is kept; a sink added gets the events
// recorded from then on; a sink removed loses what it was still owed.
func TestDeliverySinksChange(t *testing.T) {
	t.Parallel()
	var downA atomic.Bool
	send := newSender(func(_ context.Context, sink, _ string) error {
		if sink == sinkA && downA.Load() {
			return errDown
		}
		return nil
	})
	store, set := newMemStore(), &sinks{}
	d, start := deliveries(t, fast, "r1", store, set, send, time.Now)
	start()

	record(t, d, statusEvent("run", 0))
	q, e := store.size()
	assert.Zero(t, q+e, "no sinks: nothing stored")

	set.set(sinkA)
	record(t, d, statusEvent("run", 1))
	require.Eventually(t, func() bool { return len(send.received(sinkA)) == 1 }, wait, tick)
	set.set(sinkA, sinkB)
	record(t, d, statusEvent("run", 2))
	require.Eventually(t, func() bool { return len(send.received(sinkA)) == 2 && len(send.received(sinkB)) == 1 }, wait, tick)
	assert.Equal(t, []string{"run/1", "run/2"}, send.received(sinkA))
	assert.Equal(t, []string{"run/2"}, send.received(sinkB))

	downA.Store(true)
	record(t, d, statusEvent("run", 3))
	record(t, d, statusEvent("run", 4))
	require.Eventually(t, func() bool { return len(send.received(sinkB)) == 3 && len(store.attempts()) > 0 }, wait, tick)
	set.set(sinkB)
	require.Eventually(t, func() bool { q, e := store.size(); return q == 0 && e == 0 }, wait, tick, "the removed sink's queue is dropped")
	assert.Equal(t, []string{"run/1", "run/2"}, send.received(sinkA))
	assert.Equal(t, []string{"run/2", "run/3", "run/4"}, send.received(sinkB))
	assert.Empty(t, store.failed(), "dropped, not given up")
}

// TestDeliveryDownSinkBlocksNothing: a sink that is down, and one that never answers, hold
// up neither another sink nor, on one sink, another run.
func TestDeliveryDownSinkBlocksNothing(t *testing.T) {
	t.Parallel()
	const down, hangs, picky = "http://down.example/", "http://hangs.example/", "http://picky.example/"
	send := newSender(func(ctx context.Context, sink, id string) error {
		switch {
		case sink == down:
			return errDown
		case sink == hangs:
			<-ctx.Done()
			return ctx.Err()
		case sink == picky && id[:4] == "run0":
			return errDown
		}
		return nil
	})
	store, set := newMemStore(), &sinks{}
	set.set(down, hangs, picky, sinkA)
	cfg := fast
	cfg.Workers, cfg.PerSink, cfg.SendTimeout = 4, 2, time.Minute
	d, start := deliveries(t, cfg, "r1", store, set, send, time.Now)
	start()
	const runs, each = 6, 10
	for n := range each {
		for r := range runs {
			record(t, d, statusEvent(fmt.Sprintf("run%d", r), n))
		}
	}
	require.Eventually(t, func() bool {
		return len(send.received(sinkA)) == runs*each && len(send.received(picky)) == (runs-1)*each
	}, wait, tick)
	for r := range runs {
		run := fmt.Sprintf("run%d", r)
		assert.Equal(t, idsOf(run, 0, each), send.ofRun(sinkA, run))
		if r > 0 {
			assert.Equal(t, idsOf(run, 0, each), send.ofRun(picky, run), "another run's failing event does not hold up %s", run)
		}
	}
	assert.Empty(t, send.ofRun(picky, "run0"))
	assert.Empty(t, send.received(down))
	assert.Empty(t, send.received(hangs))
}

// TestDeliveryRecordedOnce: an event recorded again (the broker's redelivery) is sent once.
func TestDeliveryRecordedOnce(t *testing.T) {
	t.Parallel()
	send := newSender(nil)
	store, set := newMemStore(), &sinks{}
	set.set(sinkA)
	d, start := deliveries(t, fast, "r1", store, set, send, time.Now)
	for range 3 {
		record(t, d, statusEvent("run", 0))
	}
	record(t, d, statusEvent("run", 1))
	record(t, d, statusEvent("run", 0))
	start()
	require.Eventually(t, func() bool { q, e := store.size(); return q == 0 && e == 0 }, wait, tick)
	assert.Equal(t, []string{"run/0", "run/1"}, send.received(sinkA))
}

// TestDeliveryReplicas: two replicas share the queues, the events of each run recorded by
// either, and every run's events still arrive in order; a replica stopped with events owed
// leaves them to the other.
func TestDeliveryReplicas(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	send := newSender(func(context.Context, string, string) error {
		if down.Load() {
			return errDown
		}
		return nil
	})
	store, set := newMemStore(), &sinks{}
	set.set(sinkA, sinkC)
	a, startA := deliveries(t, fast, "a", store, set, send, time.Now)
	b, startB := deliveries(t, fast, "b", store, set, send, time.Now)
	stopA := startA()
	stopB := startB()
	const runs, each = 8, 12
	for n := range each {
		for r := range runs {
			d := a
			if (n+r)%3 == 0 {
				d = b
			}
			record(t, d, statusEvent(fmt.Sprintf("run%d", r), n))
		}
	}
	require.Eventually(t, func() bool { return len(send.received(sinkA)) == runs*each && len(send.received(sinkC)) == runs*each }, wait, tick)
	for r := range runs {
		run := fmt.Sprintf("run%d", r)
		assert.Equal(t, idsOf(run, 0, each), send.ofRun(sinkA, run))
		assert.Equal(t, idsOf(run, 0, each), send.ofRun(sinkC, run))
	}

	stopB()
	down.Store(true)
	record(t, a, statusEvent("late", 0))
	record(t, a, statusEvent("late", 1))
	require.Eventually(t, func() bool { return len(store.attempts()) >= 2 }, wait, tick)
	stopA()
	down.Store(false)
	_, startB2 := deliveries(t, fast, "b2", store, set, send, time.Now)
	startB2()
	require.Eventually(t, func() bool { return len(send.ofRun(sinkA, "late")) == 2 && len(send.ofRun(sinkC, "late")) == 2 }, wait, tick)
	assert.Equal(t, idsOf("late", 0, 2), send.ofRun(sinkA, "late"))
	assert.Equal(t, idsOf("late", 0, 2), send.ofRun(sinkC, "late"))
}

// TestDeliveryMissingRecord: an event its queue counts but whose record never came (its
// recorder stopped between the two writes) is waited for, then skipped.
func TestDeliveryMissingRecord(t *testing.T) {
	t.Parallel()
	send := newSender(nil)
	store, set := newMemStore(), &sinks{}
	set.set(sinkA)
	cfg := fast
	cfg.GapGrace = 50 * time.Millisecond
	d, start := deliveries(t, cfg, "r1", store, set, send, time.Now)
	record(t, d, statusEvent("run", 0))
	qid := domain.QueueID(sinkA, "run")
	q, err := store.FindQueue(context.Background(), qid)
	require.NoError(t, err)
	q.Append("run/1") // counted, never stored
	require.NoError(t, store.SaveRecorded(context.Background(), q, nil))
	record(t, d, statusEvent("run", 2))
	start()
	require.Eventually(t, func() bool { return len(send.received(sinkA)) == 2 }, wait, tick)
	assert.Equal(t, []string{"run/0", "run/2"}, send.received(sinkA))
}

func TestRunOf(t *testing.T) {
	t.Parallel()
	mk := func(typ string, data any) event.Event {
		e, err := events.New("id", events.Source("runs"), typ, "", data)
		require.NoError(t, err)
		return e
	}
	tests := []struct {
		name    string
		give    event.Event
		want    string
		wantErr bool
	}{
		{"run", mk(events.TypeStatusWorkflowRun, events.WorkflowRun{ID: "r1"}), "r1", false},
		{"task run", mk(events.TypeStatusTaskRun, events.TaskRun{ID: "t1", WorkflowRunRef: "r2"}), "r2", false},
		{"action", mk(events.TypeStatusAction, events.Action{ID: "a1", WorkflowRunRef: "r3"}), "r3", false},
		{"other type", mk(events.TypeTeamCreated, events.TeamCreated{Name: "t"}), "", false},
		{"no run", mk(events.TypeStatusTaskRun, events.TaskRun{ID: "t1"}), "", true},
		{"not an object", mk(events.TypeStatusWorkflowRun, []int{1}), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := app.RunOf(tt.give)
			if tt.wantErr {
				assert.ErrorIs(t, err, app.ErrMalformedEvent)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestDeliveryLongQueue: a queue holds its first events itself and stores the rest apart,
// so one sink down for long keeps its queues small; back up, it gets every event, in
// order, and the records apart are deleted.
func TestDeliveryLongQueue(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	down.Store(true)
	send := newSender(func(context.Context, string, string) error {
		if down.Load() {
			return errDown
		}
		return nil
	})
	store, set := newMemStore(), &sinks{}
	set.set(sinkA)
	d, start := deliveries(t, fast, "r1", store, set, send, time.Now)
	const n = 3 * domain.InlineMax
	for i := range n {
		record(t, d, statusEvent("run", i))
	}
	q, err := store.FindQueue(context.Background(), domain.QueueID(sinkA, "run"))
	require.NoError(t, err)
	assert.Equal(t, domain.InlineMax, len(q.Inline))
	_, apart := store.size()
	assert.Equal(t, n-domain.InlineMax, apart)
	start()
	require.Eventually(t, func() bool { return len(store.attempts()) > 2 }, wait, tick)
	down.Store(false)
	require.Eventually(t, func() bool { return len(send.received(sinkA)) == n }, wait, tick)
	assert.Equal(t, idsOf("run", 0, n), send.received(sinkA))
	require.Eventually(t, func() bool { q, e := store.size(); return q == 0 && e == 0 }, wait, tick)
}

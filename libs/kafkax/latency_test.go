package kafkax_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
)

// TestGroupHandoff walks a consumer group through what the tuning is for: a new group
// reading a backlog, steady-state handoff, and a second member taking over partitions
// (kafka-go's defaults cost seconds here: a 10 s MaxWait on close, a 3 s heartbeat before a
// new member gets partitions, a 1 s batch timeout per publish). It logs the timings with
// -v; speed itself is judged by the benchmarks, never by assertions.
func TestGroupHandoff(t *testing.T) {
	t.Parallel()
	env := newEnv(t, events.RunEvents)
	ctx := context.Background()
	p := env.producer(t)

	// Publish: one message at a time, each waiting for acks=all.
	const n = 100
	start := time.Now()
	for i := range n {
		require.NoError(t, p.Publish(ctx, events.RunEvents, "run-"+strconv.Itoa(i%7), newEvent(t, strconv.Itoa(i))))
	}
	perPublish := time.Since(start) / n
	t.Logf("publish, acks=all, one at a time: %v per message", perPublish)

	// A new group: from Run to the first message (the n published above are waiting).
	got := make(chan time.Time, 2*n)
	handler := func(context.Context, event.Event) error {
		got <- time.Now()
		return nil
	}
	start = time.Now()
	env.startConsumer(t, kafkax.ConsumerOptions{GroupID: "insights", Topic: events.RunEvents, Handler: handler})
	firstMessage := receive(t, got).Sub(start)
	for range n - 1 {
		receive(t, got)
	}
	t.Logf("new group: first message after %v, all %d after %v", firstMessage, n, time.Since(start))

	// Steady state: publish to handler.
	start = time.Now()
	require.NoError(t, p.Publish(ctx, events.RunEvents, "run-x", newEvent(t, "x")))
	handoff := receive(t, got).Sub(start)
	t.Logf("publish to handler, group running: %v", handoff)

	// A second member joining takes over partitions at the next heartbeat.
	start = time.Now()
	second := make(chan time.Time, 1)
	env.startConsumer(t, kafkax.ConsumerOptions{GroupID: "insights", Topic: events.RunEvents,
		Handler: func(context.Context, event.Event) error {
			select {
			case second <- time.Now():
			default:
			}
			return nil
		}})
	// Keep publishing on every key until the new member handles one.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(waitTimeout)
	for i := 0; ; i++ {
		select {
		case at := <-second:
			t.Logf("second member: first message %v after it started", at.Sub(start))
			return
		case <-tick.C:
			require.NoError(t, p.Publish(ctx, events.RunEvents, "run-"+strconv.Itoa(i), newEvent(t, "r"+strconv.Itoa(i))))
		case <-deadline:
			t.Fatal("second member got no partition")
		}
	}
}

func BenchmarkPublish(b *testing.B) {
	env := newEnv(b, events.RunEvents)
	p := kafkax.NewProducer(env.cfg)
	defer p.Close()
	e, err := events.New("1", events.Source("bench"), events.TypeTeamDeleted, "", events.TeamDeleted{ID: "1"})
	require.NoError(b, err)
	ctx := context.Background()
	for b.Loop() {
		if err := p.Publish(ctx, events.RunEvents, "k", e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPublishParallel shows concurrent publishers sharing produce requests within the
// batch timeout.
func BenchmarkPublishParallel(b *testing.B) {
	env := newEnv(b, events.RunEvents)
	p := kafkax.NewProducer(env.cfg)
	defer p.Close()
	e, err := events.New("1", events.Source("bench"), events.TypeTeamDeleted, "", events.TeamDeleted{ID: "1"})
	require.NoError(b, err)
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := p.Publish(context.Background(), events.RunEvents, "k", e); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

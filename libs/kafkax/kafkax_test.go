package kafkax_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
)

// delivery is what a test handler saw.
type delivery struct {
	ctx context.Context
	e   event.Event
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// publish sends e and returns the trace id the consumer must continue.
		publish func(t *testing.T, env testEnv, p *kafkax.Producer, e event.Event) trace.TraceID
	}{
		{
			name: "trace of the caller",
			publish: func(t *testing.T, env testEnv, p *kafkax.Producer, e event.Event) trace.TraceID {
				ctx, span := env.tp.Tracer("test").Start(context.Background(), "request")
				defer span.End()
				require.NoError(t, p.Publish(ctx, events.TeamEvents, "team-1", e))
				return span.SpanContext().TraceID()
			},
		},
		{
			name: "trace stored with an outbox entry",
			publish: func(t *testing.T, env testEnv, p *kafkax.Producer, e event.Event) trace.TraceID {
				ctx, span := env.tp.Tracer("test").Start(context.Background(), "request")
				stored := propagation.MapCarrier{}
				propagation.TraceContext{}.Inject(ctx, stored)
				span.End()
				// The relay publishes later, outside the request.
				require.NoError(t, p.PublishMany(context.Background(), events.TeamEvents,
					kafkax.Message{Key: "team-1", Event: e, Trace: stored}))
				return span.SpanContext().TraceID()
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t, events.TeamEvents)
			p := env.producer(t)
			got := make(chan delivery, 1)
			env.startConsumer(t, kafkax.ConsumerOptions{
				GroupID: "svc",
				Topic:   events.TeamEvents,
				Handler: func(ctx context.Context, e event.Event) error {
					got <- delivery{ctx, e}
					return nil
				},
			})

			sent := newEvent(t, "evt-1")
			traceID := tt.publish(t, env, p, sent)

			d := receive(t, got)
			assert.Equal(t, sent.ID(), d.e.ID())
			assert.Equal(t, sent.Type(), d.e.Type())
			assert.Equal(t, sent.Subject(), d.e.Subject())
			data, err := events.Decode[events.TeamDeleted](d.e)
			require.NoError(t, err)
			assert.Equal(t, events.TeamDeleted{ID: "evt-1", Name: "team evt-1"}, data)
			handlerSpan := trace.SpanContextFromContext(d.ctx)
			assert.Equal(t, traceID, handlerSpan.TraceID(), "handler continues the producer's trace")

			// The process span is the send span's child, in the same trace.
			var send, process sdktrace.ReadOnlySpan
			eventually(t, "send and process spans", func() bool {
				for _, s := range env.spans.Ended() {
					switch s.Name() {
					case "send test.team.events":
						send = s
					case "process test.team.events":
						process = s
					}
				}
				return send != nil && process != nil
			})
			assert.Equal(t, trace.SpanKindProducer, send.SpanKind())
			assert.Equal(t, trace.SpanKindConsumer, process.SpanKind())
			assert.Equal(t, traceID, send.SpanContext().TraceID())
			assert.Equal(t, send.SpanContext().SpanID(), process.Parent().SpanID())
			assert.Equal(t, handlerSpan.SpanID(), process.SpanContext().SpanID())

			// On the wire: the key, the envelope headers and the trace context.
			raw := env.readRaw(t, "test.team.events", 1)[0]
			assert.Equal(t, "team-1", string(raw.Key))
			assert.Equal(t, "evt-1", header(raw, kafkax.HeaderEventID))
			assert.Equal(t, events.TypeTeamDeleted, header(raw, kafkax.HeaderEventType))
			assert.Equal(t, events.ContentType, header(raw, kafkax.HeaderContentType))
			assert.Contains(t, header(raw, "traceparent"), traceID.String())
			onWire, err := events.Unmarshal(raw.Value)
			require.NoError(t, err)
			assert.Equal(t, sent.ID(), onWire.ID())
		})
	}
}

func TestKeyOrder(t *testing.T) {
	t.Parallel()
	env := newEnv(t, events.TaskUpdates)
	p := env.producer(t)
	const n = 50
	got := make(chan string, n)
	env.startConsumer(t, kafkax.ConsumerOptions{
		GroupID: "runs",
		Topic:   events.TaskUpdates,
		Handler: func(_ context.Context, e event.Event) error {
			got <- e.ID()
			return nil
		},
	})

	msgs := make([]kafkax.Message, n)
	for i := range msgs {
		msgs[i] = kafkax.Message{Key: "run-1", Event: newEvent(t, strconv.Itoa(i))}
	}
	require.NoError(t, p.PublishMany(context.Background(), events.TaskUpdates, msgs...))
	for i := range n {
		assert.Equal(t, strconv.Itoa(i), receive(t, got))
	}
	eventually(t, "all offsets committed", func() bool { return env.committed(t, "runs", "test.task.updates") == n })
}

// With Types, events of other types are committed without reaching the handler.
func TestConsumerTypes(t *testing.T) {
	t.Parallel()
	env := newEnv(t, events.RunEvents)
	p := env.producer(t)
	got := make(chan string, 4)
	env.startConsumer(t, kafkax.ConsumerOptions{
		GroupID: "chat", Topic: events.RunEvents, Types: []string{events.TypeTeamCreated},
		Handler: func(_ context.Context, e event.Event) error {
			got <- e.ID()
			return nil
		},
	})
	created := func(id string) event.Event {
		e, err := events.New(id, events.Source("test"), events.TypeTeamCreated, "", events.TeamCreated{Name: id})
		require.NoError(t, err)
		return e
	}
	require.NoError(t, p.PublishMany(context.Background(), events.RunEvents,
		kafkax.Message{Key: "k", Event: newEvent(t, "deleted-1")},
		kafkax.Message{Key: "k", Event: created("created-1")},
		kafkax.Message{Key: "k", Event: newEvent(t, "deleted-2")},
		kafkax.Message{Key: "k", Event: created("created-2")}))
	assert.Equal(t, "created-1", receive(t, got))
	assert.Equal(t, "created-2", receive(t, got))
	eventually(t, "all offsets committed", func() bool { return env.committed(t, "chat", "test.run.events") == 4 })
	assert.Empty(t, got, "no other type reached the handler")
}

// One call carries messages of several topics, each to its own, in order within each.
func TestPublishManyAcrossTopics(t *testing.T) {
	t.Parallel()
	env := newEnv(t, events.RunEvents, events.TaskDispatch)
	p := env.producer(t)
	msgs := []kafkax.Message{
		{Key: "run-1", Event: newEvent(t, "status-1")},
		{Topic: events.TaskDispatch, Key: "run-1", Event: newEvent(t, "dispatch-1")},
		{Topic: events.RunEvents, Key: "run-1", Event: newEvent(t, "status-2")},
		{Topic: events.TaskDispatch, Key: "run-1", Event: newEvent(t, "dispatch-2")},
	}
	require.NoError(t, p.PublishMany(context.Background(), events.RunEvents, msgs...))
	ids := func(ms []kafka.Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, header(m, kafkax.HeaderEventID))
		}
		return out
	}
	assert.Equal(t, []string{"status-1", "status-2"}, ids(env.readRaw(t, "test.run.events", 2)))
	assert.Equal(t, []string{"dispatch-1", "dispatch-2"}, ids(env.readRaw(t, "test.task.dispatch", 2)))
}

func TestPublishRejectsInvalidEvent(t *testing.T) {
	t.Parallel()
	env := newEnv(t, events.TeamEvents)
	p := env.producer(t)
	tests := []struct {
		name string
		give event.Event
	}{
		{"empty event", event.New()},
		{"missing type", func() event.Event {
			e := newEvent(t, "1")
			e.SetType("")
			return e
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.Publish(context.Background(), events.TeamEvents, "k", tt.give)
			require.Error(t, err)
		})
	}
	assert.Zero(t, env.messageCount(t, "test.team.events"))
}

func TestFailures(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	tests := []struct {
		name        string
		maxAttempts int
		noDLQ       bool
		undecodable bool
		// fail decides the outcome of the given attempt (1-based).
		fail         func(attempt int32) error
		wantAttempts int32
		wantDLQ      bool
	}{
		{
			name:         "fails twice then succeeds",
			fail:         func(a int32) error { return map[bool]error{true: errBoom}[a <= 2] },
			wantAttempts: 3,
		},
		{
			name:         "permanent error skips retries",
			fail:         func(int32) error { return kafkax.Permanent(errBoom) },
			wantAttempts: 1,
			wantDLQ:      true,
		},
		{
			name:         "wrapped ErrPermanent skips retries",
			fail:         func(int32) error { return errors.Join(errBoom, kafkax.ErrPermanent) },
			wantAttempts: 1,
			wantDLQ:      true,
		},
		{
			name:         "keeps failing",
			maxAttempts:  3,
			fail:         func(int32) error { return errBoom },
			wantAttempts: 3,
			wantDLQ:      true,
		},
		{
			name:         "panics",
			maxAttempts:  2,
			fail:         func(int32) error { panic("bad handler") },
			wantAttempts: 2,
			wantDLQ:      true,
		},
		{
			name:         "undecodable message",
			undecodable:  true,
			fail:         func(int32) error { return nil },
			wantAttempts: 0,
			wantDLQ:      true,
		},
		{
			name:         "dead letter disabled",
			maxAttempts:  2,
			noDLQ:        true,
			fail:         func(int32) error { return errBoom },
			wantAttempts: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t, events.RunRequests)
			const topic, dlq = "test.run.requests", "test.run.requests.dlq"
			var attempts atomic.Int32
			handled := make(chan string, 1)
			env.startConsumer(t, kafkax.ConsumerOptions{
				GroupID:           "runs",
				Topic:             events.RunRequests,
				MaxAttempts:       tt.maxAttempts,
				Backoff:           time.Millisecond,
				DisableDeadLetter: tt.noDLQ,
				Handler: func(_ context.Context, e event.Event) error {
					if e.ID() == "next" {
						handled <- e.ID()
						return nil
					}
					return tt.fail(attempts.Add(1))
				},
			})

			var value []byte
			if tt.undecodable {
				value = []byte("not an event")
				w := &kafka.Writer{Addr: kafka.TCP(env.cfg.Brokers...), Topic: topic, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
				require.NoError(t, w.WriteMessages(context.Background(), kafka.Message{Key: []byte("key-1"), Value: value}))
				require.NoError(t, w.Close())
			} else {
				e := newEvent(t, "evt-1")
				var err error
				value, err = events.Marshal(e)
				require.NoError(t, err)
				require.NoError(t, env.producer(t).Publish(context.Background(), events.RunRequests, "key-1", e))
			}
			// A later message on the same key is handled: the failure did not block the partition.
			require.NoError(t, env.producer(t).Publish(context.Background(), events.RunRequests, "key-1", newEvent(t, "next")))
			assert.Equal(t, "next", receive(t, handled))
			eventually(t, "both offsets committed", func() bool { return env.committed(t, "runs", topic) == 2 })

			assert.Equal(t, tt.wantAttempts, attempts.Load())
			// The dead letter is written before the commit, so its count is final now.
			if !tt.wantDLQ {
				assert.Zero(t, env.messageCount(t, dlq))
				return
			}
			assert.EqualValues(t, 1, env.messageCount(t, dlq))
			dead := env.readRaw(t, dlq, 1)[0]
			assert.Equal(t, value, dead.Value, "the original message, unchanged")
			assert.Equal(t, "key-1", string(dead.Key))
			assert.Equal(t, topic, header(dead, kafkax.HeaderDLQTopic))
			assert.Equal(t, "runs", header(dead, kafkax.HeaderDLQGroup))
			assert.Equal(t, "0", header(dead, kafkax.HeaderDLQOffset))
			assert.NotEmpty(t, header(dead, kafkax.HeaderDLQPartition))
			assert.Equal(t, strconv.Itoa(int(tt.wantAttempts)), header(dead, kafkax.HeaderDLQAttempts))
			assert.NotEmpty(t, header(dead, kafkax.HeaderDLQError))
			if !tt.undecodable {
				assert.Equal(t, "evt-1", header(dead, kafkax.HeaderEventID), "original headers kept")
			}
		})
	}
}

func TestCommitAfterHandle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		backoff time.Duration
		// handle is the first consumer's handler; it reports on started and then either
		// blocks until the consumer stops or fails.
		handle func(ctx context.Context, started chan<- struct{}) error
	}{
		{
			name:    "stopped while handling",
			backoff: time.Millisecond,
			handle: func(ctx context.Context, started chan<- struct{}) error {
				started <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			},
		},
		{
			name:    "stopped while waiting to retry",
			backoff: time.Hour,
			handle: func(_ context.Context, started chan<- struct{}) error {
				started <- struct{}{}
				return errors.New("database unavailable")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t, events.TaskDispatch)
			const topic = "test.task.dispatch"
			require.NoError(t, env.producer(t).Publish(context.Background(), events.TaskDispatch, "run-1", newEvent(t, "attempt-1")))

			started := make(chan struct{}, 1)
			first := env.startConsumer(t, kafkax.ConsumerOptions{
				GroupID: "runner",
				Topic:   events.TaskDispatch,
				Backoff: tt.backoff,
				Handler: func(ctx context.Context, _ event.Event) error { return tt.handle(ctx, started) },
			})
			receive(t, started)
			first.stop(t)
			assert.Zero(t, env.committed(t, "runner", topic), "nothing committed for an unhandled message")
			assert.Zero(t, env.messageCount(t, topic+".dlq"), "a stopped consumer does not dead-letter")

			got := make(chan string, 1)
			env.startConsumer(t, kafkax.ConsumerOptions{
				GroupID: "runner",
				Topic:   events.TaskDispatch,
				Handler: func(_ context.Context, e event.Event) error {
					got <- e.ID()
					return nil
				},
			})
			assert.Equal(t, "attempt-1", receive(t, got), "redelivered to the next member")
			eventually(t, "offset committed", func() bool { return env.committed(t, "runner", topic) == 1 })
		})
	}
}

func TestShutdown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		brokers func(env testEnv) []string
		// running waits until the consumer is well into its loop.
		running func(t *testing.T, env testEnv, warnings <-chan string)
	}{
		{
			name:    "idle member of a live cluster",
			brokers: func(env testEnv) []string { return env.cfg.Brokers },
			running: func(t *testing.T, env testEnv, _ <-chan string) {
				eventually(t, "the consumer joined", func() bool {
					resp, err := env.client().DescribeGroups(context.Background(), &kafka.DescribeGroupsRequest{GroupIDs: []string{"schedules"}})
					return err == nil && len(resp.Groups) == 1 && len(resp.Groups[0].Members) == 1
				})
			},
		},
		{
			// Nothing listens on port 1: the consumer keeps retrying and must still stop.
			name:    "broker unreachable",
			brokers: func(testEnv) []string { return []string{"127.0.0.1:1"} },
			running: func(t *testing.T, _ testEnv, warnings <-chan string) {
				assert.Contains(t, receive(t, warnings), "fetch from kafka")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t, events.WorkflowEvents)
			env.cfg.Brokers = tt.brokers(env)
			warnings := make(chan string, 100)
			c := env.startConsumer(t, kafkax.ConsumerOptions{
				GroupID: "schedules",
				Topic:   events.WorkflowEvents,
				Handler: func(context.Context, event.Event) error { return nil },
				Logger:  slog.New(notifyHandler{slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}), warnings}),
			})
			tt.running(t, env, warnings)
			start := time.Now()
			c.stop(t)
			elapsed := time.Since(start)
			t.Logf("stopped in %v", elapsed)
			// An idle fetch is held by the broker for 1 s at most; with kafka-go's default
			// MaxWait (10 s) it would take up to 9 s. The margin is for a loaded machine.
			assert.Less(t, elapsed, 5*time.Second)
		})
	}
}

// notifyHandler passes on the message of every warning it logs.
type notifyHandler struct {
	slog.Handler
	warnings chan<- string
}

func (h notifyHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return notifyHandler{h.Handler.WithAttrs(attrs), h.warnings}
}

func (h notifyHandler) WithGroup(name string) slog.Handler {
	return notifyHandler{h.Handler.WithGroup(name), h.warnings}
}

func (h notifyHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		select {
		case h.warnings <- r.Message:
		default:
		}
	}
	return h.Handler.Handle(ctx, r)
}

func TestShutdownLeavesGroup(t *testing.T) {
	t.Parallel()
	env := newEnv(t, events.WorkflowEvents)
	p := env.producer(t)
	got := make(chan string, 1)
	c := env.startConsumer(t, kafkax.ConsumerOptions{
		GroupID: "schedules",
		Topic:   events.WorkflowEvents,
		Handler: func(_ context.Context, e event.Event) error {
			got <- e.ID()
			return nil
		},
	})
	require.NoError(t, p.Publish(context.Background(), events.WorkflowEvents, "wf", newEvent(t, "1")))
	receive(t, got) // the consumer is a member now

	c.stop(t)
	resp, err := env.client().DescribeGroups(context.Background(), &kafka.DescribeGroupsRequest{GroupIDs: []string{"schedules"}})
	require.NoError(t, err)
	require.Len(t, resp.Groups, 1)
	assert.Empty(t, resp.Groups[0].Members, "a stopped consumer leaves the group at once")
}

func TestRunRejectsInvalidOptions(t *testing.T) {
	t.Parallel()
	handler := func(context.Context, event.Event) error { return nil }
	tests := []struct {
		name string
		cfg  kafkax.Config
		opts kafkax.ConsumerOptions
	}{
		{"no brokers", kafkax.Config{}, kafkax.ConsumerOptions{GroupID: "g", Topic: "t", Handler: handler}},
		{"no group", kafkax.Config{Brokers: []string{"localhost:9092"}}, kafkax.ConsumerOptions{Topic: "t", Handler: handler}},
		{"no topic", kafkax.Config{Brokers: []string{"localhost:9092"}}, kafkax.ConsumerOptions{GroupID: "g", Handler: handler}},
		{"no handler", kafkax.Config{Brokers: []string{"localhost:9092"}}, kafkax.ConsumerOptions{GroupID: "g", Topic: "t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := kafkax.NewConsumer(tt.cfg, tt.opts).Run(context.Background())
			require.Error(t, err)
		})
	}
}

func TestEnsureTopics(t *testing.T) {
	t.Parallel()
	env := newEnv(t) // nothing seeded
	ctx := context.Background()
	for range 2 { // the second call finds everything in place
		require.NoError(t, kafkax.EnsureTopics(ctx, env.cfg, 4, events.AllTopics...))
	}

	conn, err := kafka.DialContext(ctx, "tcp", env.cfg.Brokers[0])
	require.NoError(t, err)
	defer conn.Close()
	for _, name := range events.AllTopics {
		full := "test." + name
		for _, topic := range []string{full, full + ".dlq"} {
			parts, err := conn.ReadPartitions(topic)
			require.NoError(t, err, topic)
			assert.Len(t, parts, 4, topic)
		}
	}

	err = kafkax.EnsureTopics(ctx, env.cfg, 0, events.TeamEvents)
	require.Error(t, err)
}

func TestPing(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	tests := []struct {
		name    string
		brokers []string
		wantErr bool
	}{
		{"live broker", env.cfg.Brokers, false},
		{"first broker down", append([]string{"127.0.0.1:1"}, env.cfg.Brokers...), false},
		{"no broker answers", []string{"127.0.0.1:1"}, true},
		{"no brokers configured", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := kafkax.Ping(ctx, kafkax.Config{Brokers: tt.brokers})
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
		})
	}
}

// With Concurrency, events of different keys are handled at once, those of one key in
// order, and every offset is committed.
//
// Key run-0 is alone on its partition, and a batch only holds what has arrived when it is
// gathered, so with the product's 1 ms window a batch can hold run-0's events alone when the
// other partitions' fetches are a little late, and the held event could never see another
// key handled. The test therefore widens the window to the wait deadline and makes every
// batch fill up (Concurrency is half the messages): a full batch holds at most run-0's 10
// events, so the batch holding 0/0 always holds other keys, and no batch waits the window out.
func TestConcurrentKeys(t *testing.T) {
	t.Parallel()
	env := newEnv(t, events.TaskUpdates)
	p := env.producer(t)
	const keys, each = 4, 10
	var msgs []kafkax.Message
	for i := range each {
		for k := range keys {
			msgs = append(msgs, kafkax.Message{Key: "run-" + strconv.Itoa(k), Event: newEvent(t, fmt.Sprintf("%d/%d", k, i))})
		}
	}
	require.NoError(t, p.PublishMany(context.Background(), events.TaskUpdates, msgs...))

	otherHandled := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	seen := map[string][]int{}
	env.startConsumer(t, kafkax.ConsumerOptions{
		GroupID:     "runs",
		Topic:       events.TaskUpdates,
		Concurrency: keys * each / 2,
		Handler: func(_ context.Context, e event.Event) error {
			key, seq, _ := strings.Cut(e.ID(), "/")
			n, _ := strconv.Atoi(seq)
			if key == "0" && n == 0 {
				// Held until another key's event is handled meanwhile.
				select {
				case <-otherHandled:
				case <-time.After(waitTimeout):
					return kafkax.Permanent(errors.New("no other key was handled while this one waited"))
				}
			}
			mu.Lock()
			seen[key] = append(seen[key], n)
			mu.Unlock()
			if key != "0" {
				once.Do(func() { close(otherHandled) })
			}
			return nil
		},
	}, func(c *kafkax.Consumer) { c.SetGatherWait(waitTimeout) })
	eventually(t, "all offsets committed", func() bool { return env.committed(t, "runs", "test.task.updates") == keys*each })
	mu.Lock()
	defer mu.Unlock()
	for k := range keys {
		want := make([]int, each)
		for i := range want {
			want[i] = i
		}
		assert.Equal(t, want, seen[strconv.Itoa(k)], "key %d in order, each once", k)
	}
}

// A new group told FromNewest starts at the topic's end: what was published before it
// joined never reaches it, what is published after does.
func TestConsumerFromNewest(t *testing.T) {
	t.Parallel()
	env := newEnv(t, events.RunEvents)
	p := env.producer(t)
	for i := range 3 {
		require.NoError(t, p.Publish(context.Background(), events.RunEvents, fmt.Sprint(i), newEvent(t, fmt.Sprintf("old-%d", i))))
	}
	got := make(chan string, 64)
	env.startConsumer(t, kafkax.ConsumerOptions{
		GroupID: "replica-1", Topic: events.RunEvents, FromNewest: true, DisableDeadLetter: true,
		Handler: func(_ context.Context, e event.Event) error {
			got <- e.ID()
			return nil
		},
	})
	// When it has joined is not told: publish until something arrives.
	var first string
	for i := 0; first == ""; i++ {
		require.Less(t, i, 200, "nothing new arrived")
		require.NoError(t, p.Publish(context.Background(), events.RunEvents, "k", newEvent(t, fmt.Sprintf("new-%d", i))))
		select {
		case first = <-got:
		case <-time.After(50 * time.Millisecond):
		}
	}
	assert.True(t, strings.HasPrefix(first, "new-"), "first handled: %s", first)
	for len(got) > 0 {
		assert.True(t, strings.HasPrefix(<-got, "new-"))
	}
}

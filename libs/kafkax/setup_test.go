package kafkax_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
)

// testPrefix keeps test topics apart from the default "baton." names.
const testPrefix = "test."

// waitTimeout bounds every wait in these tests; things normally happen in milliseconds, but
// a machine running every test binary at once can stall any of them for seconds. It only
// bounds how long a failure takes to show.
const waitTimeout = 60 * time.Second

// testEnv is one in-process cluster with its own tracer, so tests share no global state.
type testEnv struct {
	cfg   kafkax.Config
	spans *tracetest.SpanRecorder
	tp    *sdktrace.TracerProvider
}

// newEnv starts a one-broker kfake cluster with the given unprefixed topics (and their dead
// letter topics) seeded with 3 partitions.
func newEnv(t testing.TB, topics ...string) testEnv {
	t.Helper()
	var seeded []string
	for _, name := range topics {
		full := events.Topic(testPrefix, name)
		seeded = append(seeded, full, events.DeadLetter(full))
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, seeded...), kfake.AllowAutoTopicCreation())
	require.NoError(t, err)
	t.Cleanup(cluster.Close)

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return testEnv{
		cfg: kafkax.Config{
			Brokers:        cluster.ListenAddrs(),
			TopicPrefix:    testPrefix,
			ClientID:       "kafkax-test",
			TracerProvider: tp,
			Propagator:     propagation.TraceContext{},
		},
		spans: spans,
		tp:    tp,
	}
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// producer returns a Producer closed when the test ends.
func (env testEnv) producer(t *testing.T) *kafkax.Producer {
	t.Helper()
	p := kafkax.NewProducer(env.cfg)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return p
}

// runningConsumer is a Consumer running in the background.
type runningConsumer struct {
	cancel context.CancelFunc
	done   chan error
}

// startConsumer runs a consumer, after applying tune to it, until stop is called or the test
// ends.
func (env testEnv) startConsumer(t *testing.T, opts kafkax.ConsumerOptions, tune ...func(*kafkax.Consumer)) *runningConsumer {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rc := &runningConsumer{cancel: cancel, done: make(chan error, 1)}
	c := kafkax.NewConsumer(env.cfg, opts)
	for _, f := range tune {
		f(c)
	}
	go func() { rc.done <- c.Run(ctx) }()
	t.Cleanup(func() { rc.stop(t) })
	return rc
}

// stop cancels the consumer and waits for Run to return, which must be nil.
func (rc *runningConsumer) stop(t *testing.T) {
	t.Helper()
	rc.cancel()
	select {
	case err, ok := <-rc.done:
		if ok {
			require.NoError(t, err)
			close(rc.done)
		}
	case <-time.After(waitTimeout):
		t.Fatal("consumer did not stop")
	}
}

func newEvent(t *testing.T, id string) event.Event {
	t.Helper()
	e, err := events.New(id, events.Source("test"), events.TypeTeamDeleted, "/team/"+id, events.TeamDeleted{ID: id, Name: "team " + id})
	require.NoError(t, err)
	return e
}

// receive waits for a value on ch.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatal("timed out waiting")
		var zero T
		return zero
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func (env testEnv) client() *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(env.cfg.Brokers...), Timeout: 5 * time.Second}
}

// committed sums the offsets group has committed on topic's 3 partitions: with every
// message handled it equals the number of messages written.
//
// A group that has not been created yet (no member has joined it, nothing committed) has
// committed nothing. Kafka answers such a fetch with offset -1 on every partition; kfake answers
// GROUP_ID_NOT_FOUND, which a test polling right after starting a consumer would otherwise
// take for a failure.
func (env testEnv) committed(t *testing.T, group, topic string) int64 {
	t.Helper()
	resp, err := env.client().OffsetFetch(context.Background(), &kafka.OffsetFetchRequest{
		GroupID: group,
		Topics:  map[string][]int{topic: {0, 1, 2}},
	})
	require.NoError(t, err)
	if errors.Is(resp.Error, kafka.GroupIdNotFound) {
		return 0
	}
	require.NoError(t, resp.Error)
	var sum int64
	for _, p := range resp.Topics[topic] {
		require.NoError(t, p.Error)
		if p.CommittedOffset > 0 {
			sum += p.CommittedOffset
		}
	}
	return sum
}

// messageCount is the number of messages on topic's 3 partitions.
func (env testEnv) messageCount(t *testing.T, topic string) int64 {
	t.Helper()
	resp, err := env.client().ListOffsets(context.Background(), &kafka.ListOffsetsRequest{
		Topics: map[string][]kafka.OffsetRequest{topic: {kafka.LastOffsetOf(0), kafka.LastOffsetOf(1), kafka.LastOffsetOf(2)}},
	})
	require.NoError(t, err)
	var sum int64
	for _, p := range resp.Topics[topic] {
		require.NoError(t, p.Error)
		sum += p.LastOffset
	}
	return sum
}

// readRaw reads n messages from the full topic name with a plain kafka-go reader, so tests
// can check what is on the wire.
func (env testEnv) readRaw(t *testing.T, topic string, n int) []kafka.Message {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: env.cfg.Brokers,
		GroupID: fmt.Sprintf("raw-%s-%d", t.Name(), time.Now().UnixNano()),
		Topic:   topic,
		MaxWait: 100 * time.Millisecond,
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	msgs := make([]kafka.Message, 0, n)
	for range n {
		m, err := r.FetchMessage(ctx)
		require.NoError(t, err)
		msgs = append(msgs, m)
	}
	return msgs
}

func header(m kafka.Message, key string) string {
	h := kafkax.HeaderCarrier(m.Headers)
	return h.Get(key)
}

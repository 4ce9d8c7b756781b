package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/embedded"
)

func TestKafkaRoundTrip(t *testing.T) {
	t.Parallel()
	began := time.Now()
	k, err := embedded.StartKafka(embedded.KafkaConfig{Topics: []string{"seeded"}})
	require.NoError(t, err)
	t.Cleanup(k.Close)
	t.Logf("kfake ready in %s at %v", time.Since(began), k.Brokers())
	brokers := k.Brokers()
	require.Len(t, brokers, 1)

	tests := []struct {
		name           string
		topic          string
		create         func(t *testing.T, topic string)
		wantPartitions int
	}{
		{name: "seeded topic", topic: "seeded", wantPartitions: 3},
		{
			name:  "topic created with Conn.CreateTopics",
			topic: "created",
			create: func(t *testing.T, topic string) {
				createTopic(t, brokers[0], kafka.TopicConfig{Topic: topic, NumPartitions: 2, ReplicationFactor: 1})
			},
			wantPartitions: 2,
		},
		{name: "topic auto-created by the Writer", topic: "auto", wantPartitions: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			if tt.create != nil {
				tt.create(t, tt.topic)
			}

			w := &kafka.Writer{
				Addr:         kafka.TCP(brokers...),
				Topic:        tt.topic,
				Balancer:     &kafka.Hash{},
				RequiredAcks: kafka.RequireAll,
				BatchTimeout: 5 * time.Millisecond,
				// Writers share kafka.DefaultTransport, which caches metadata for 6 s:
				// without this, a topic created through kafka.Conn after the cache
				// was filled is "Unknown Topic Or Partition" until the next refresh.
				// With it, a topic missing from the cache triggers a metadata request.
				AllowAutoTopicCreation: true,
			}
			t.Cleanup(func() { _ = w.Close() })
			const n = 30
			want := map[string]bool{}
			msgs := make([]kafka.Message, n)
			for i := range msgs {
				key := fmt.Sprintf("k%02d", i)
				msgs[i] = kafka.Message{Key: []byte(key), Value: []byte("v" + key)}
				want[key] = true
			}
			require.NoError(t, w.WriteMessages(ctx, msgs...))
			assert.Len(t, partitions(t, brokers[0], tt.topic), tt.wantPartitions)

			group := "g-" + tt.topic
			got := map[string]bool{}
			r := newReader(brokers, group, tt.topic)
			for len(got) < n {
				m, err := r.ReadMessage(ctx)
				require.NoError(t, err, "read after %d messages", len(got))
				assert.Equal(t, "v"+string(m.Key), string(m.Value))
				got[string(m.Key)] = true
			}
			require.NoError(t, r.Close())
			assert.Equal(t, want, got)

			// The group committed its offsets: a new member sees only what comes next.
			require.NoError(t, w.WriteMessages(ctx, kafka.Message{Key: []byte("last"), Value: []byte("vlast")}))
			r = newReader(brokers, group, tt.topic)
			defer func() { _ = r.Close() }()
			m, err := r.ReadMessage(ctx)
			require.NoError(t, err)
			assert.Equal(t, "last", string(m.Key))
		})
	}
}

func TestKafkaFixedPort(t *testing.T) {
	t.Parallel()
	// A port found free can be taken by a parallel test before the broker binds it: only
	// that failure earns another port.
	var addr string
	var k *embedded.Kafka
	var err error
	for range 5 {
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
		k, err = embedded.StartKafka(embedded.KafkaConfig{Addr: addr, Partitions: 5, Topics: []string{"a", "b"}})
		if !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
	}
	require.NoError(t, err)
	defer k.Close()
	assert.Equal(t, []string{addr}, k.Brokers())
	assert.Len(t, partitions(t, addr, "b"), 5)

	// The port is taken now, so a second broker on it must fail.
	_, err = embedded.StartKafka(embedded.KafkaConfig{Addr: addr})
	assert.Error(t, err)

	k.Close()
	k.Close()
}

func TestStartKafkaBadAddr(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"nope", "127.0.0.1:x", "127.0.0.1:70000"} {
		_, err := embedded.StartKafka(embedded.KafkaConfig{Addr: addr})
		assert.Error(t, err, addr)
	}
}

func newReader(brokers []string, group, topic string) *kafka.Reader {
	return kafka.NewReader(kafka.ReaderConfig{
		Brokers: brokers,
		GroupID: group,
		Topic:   topic,
		// Close waits for in-flight fetches, which long-poll up to MaxWait (default 10 s).
		MaxWait: 100 * time.Millisecond,
	})
}

func createTopic(t *testing.T, broker string, cfg kafka.TopicConfig) {
	t.Helper()
	conn, err := kafka.Dial("tcp", broker)
	require.NoError(t, err)
	defer conn.Close()
	controller, err := conn.Controller()
	require.NoError(t, err)
	cc, err := kafka.Dial("tcp", net.JoinHostPort(controller.Host, strconv.Itoa(controller.Port)))
	require.NoError(t, err)
	defer cc.Close()
	require.NoError(t, cc.CreateTopics(cfg))
}

func partitions(t *testing.T, broker, topic string) []kafka.Partition {
	t.Helper()
	conn, err := kafka.Dial("tcp", broker)
	require.NoError(t, err)
	defer conn.Close()
	ps, err := conn.ReadPartitions(topic)
	require.NoError(t, err)
	return ps
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestKafkaAutoCreatesOnMetadata(t *testing.T) {
	t.Parallel()
	k, err := embedded.StartKafka(embedded.KafkaConfig{Partitions: 4})
	require.NoError(t, err)
	defer k.Close()
	// kafka.Conn asks with Metadata v1, as the consumer-group Reader does; like a broker
	// with auto.create.topics.enable, kfake creates the topic with the default count.
	assert.Len(t, partitions(t, k.Brokers()[0], "fresh"), 4)
}

// A broker with a retention drops the oldest batches of a partition beyond it: kept in
// memory, a long-lived process's messages would otherwise grow without end.
func TestKafkaRetention(t *testing.T) {
	t.Parallel()
	k, err := embedded.StartKafka(embedded.KafkaConfig{Partitions: 1, Topics: []string{"kept"}, RetentionBytes: 1024})
	require.NoError(t, err)
	t.Cleanup(k.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	w := &kafka.Writer{Addr: kafka.TCP(k.Brokers()...), Topic: "kept", RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	t.Cleanup(func() { _ = w.Close() })
	const n = 40
	for i := range n {
		// One batch each: retention drops whole batches.
		require.NoError(t, w.WriteMessages(ctx, kafka.Message{Value: []byte(fmt.Sprintf("%0100d", i))}))
	}
	conn, err := kafka.DialLeader(ctx, "tcp", k.Brokers()[0], "kept", 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	first, last, err := conn.ReadOffsets()
	require.NoError(t, err)
	require.Equal(t, int64(0), first)
	require.Equal(t, int64(n), last)

	embedded.ApplyRetention(k)
	first, last, err = conn.ReadOffsets()
	require.NoError(t, err)
	assert.Greater(t, first, int64(n/2), "the oldest batches are dropped")
	assert.Equal(t, int64(n), last, "the newest are kept")
}

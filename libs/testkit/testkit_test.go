package testkit_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	consul "github.com/hashicorp/consul/api"
	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestMongo(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	began := time.Now()
	uri := testkit.MongoURI(t)
	t.Logf("mongo at %s after %s", uri, time.Since(began))

	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })

	coll := client.Database(testkit.Database(t)).Collection("things")
	_, err = coll.InsertOne(ctx, bson.M{"_id": "a", "name": "first"})
	require.NoError(t, err)
	var got struct{ Name string }
	require.NoError(t, coll.FindOne(ctx, bson.M{"_id": "a"}).Decode(&got))
	assert.Equal(t, "first", got.Name)
}

func TestKafka(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	began := time.Now()
	brokers := testkit.KafkaBrokers(t)
	t.Logf("kafka at %v after %s", brokers, time.Since(began))
	prefix := testkit.TopicPrefix(t)
	topic := prefix + "events"

	w := &kafka.Writer{
		Addr:                   kafka.TCP(brokers...),
		Topic:                  topic,
		RequiredAcks:           kafka.RequireAll,
		BatchTimeout:           5 * time.Millisecond,
		AllowAutoTopicCreation: true,
	}
	t.Cleanup(func() { _ = w.Close() })
	require.NoError(t, w.WriteMessages(ctx, kafka.Message{Key: []byte("k"), Value: []byte("hello")}))

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: brokers,
		GroupID: prefix + "group",
		Topic:   topic,
		// Reader.Close waits for in-flight fetches, which long-poll for up to MaxWait
		// (default 10 s) on partitions without data.
		MaxWait: 100 * time.Millisecond,
	})
	t.Cleanup(func() { _ = r.Close() })
	m, err := r.ReadMessage(ctx)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(m.Value))
}

func TestConsul(t *testing.T) {
	t.Parallel()
	began := time.Now()
	addr := testkit.ConsulAddr(t)
	t.Logf("consul at %s after %s", addr, time.Since(began))

	client, err := consul.NewClient(&consul.Config{Address: addr})
	require.NoError(t, err)
	name := "testkit-svc"
	require.NoError(t, client.Agent().ServiceRegister(&consul.AgentServiceRegistration{
		ID: name + "-1", Name: name, Address: "127.0.0.1", Port: 8080,
	}))

	// The agent syncs registrations to the catalog asynchronously.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		services, _, err := client.Catalog().Service(name, "", nil)
		require.NoError(c, err)
		require.Len(c, services, 1)
		assert.Equal(c, 8080, services[0].ServicePort)
	}, 10*time.Second, 20*time.Millisecond)
}

func TestNamesAreUniqueAndValid(t *testing.T) {
	t.Parallel()
	// FerretDB's rule for database names, stricter than MongoDB's.
	dbName := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,63}$`)
	// Kafka's rule for topic names, with room left for the test's own suffix.
	topicPrefix := regexp.MustCompile(`^[a-zA-Z0-9._-]{1,40}\.$`)

	tests := []struct {
		name  string
		give  func(testing.TB) string
		valid *regexp.Regexp
	}{
		{name: "Database", give: testkit.Database, valid: dbName},
		{name: "TopicPrefix", give: testkit.TopicPrefix, valid: topicPrefix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			seen := map[string]bool{}
			for range 100 {
				got := tt.give(t)
				assert.Regexp(t, tt.valid, got)
				assert.False(t, seen[got], "duplicate %q", got)
				seen[got] = true
			}
		})
	}
}

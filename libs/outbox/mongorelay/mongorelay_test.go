package mongorelay_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/libs/outbox/mongorelay"
	"github.com/baton-flow/baton/libs/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

type published struct {
	topic, key, id string
}

// recorder is a Publisher that records what it sent and fails while failing is set.
type recorder struct {
	mu      sync.Mutex
	sent    []published
	failing bool
}

func (r *recorder) Publish(_ context.Context, topic, key string, e event.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failing {
		return errors.New("broker down")
	}
	r.sent = append(r.sent, published{topic, key, e.ID()})
	return nil
}

func (r *recorder) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, p := range r.sent {
		out = append(out, p.id)
	}
	return out
}

func entry(t *testing.T, id string) outbox.Entry {
	t.Helper()
	e, err := events.New(id, events.Source("test"), events.TypeTeamCreated, "/team/x", events.TeamCreated{ID: id, Name: "x"})
	require.NoError(t, err)
	en, err := outbox.NewEntry(events.TeamEvents, "x", e)
	require.NoError(t, err)
	return en
}

func collection(t *testing.T) *mongo.Collection {
	t.Helper()
	client, err := mongox.Connect(context.Background(), testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	return client.Database(testkit.Database(t)).Collection("things")
}

func TestSweepPublishesInOrderAndClears(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	coll := collection(t)
	_, err := coll.InsertMany(ctx, []any{
		bson.M{"_id": "a", "outbox": []outbox.Entry{entry(t, "a1"), entry(t, "a2")}},
		bson.M{"_id": "b", "outbox": []outbox.Entry{}},
		bson.M{"_id": "c", "deleted": true, "outbox": []outbox.Entry{entry(t, "c1")}},
		bson.M{"_id": "d", "deleted": true, "outbox": []outbox.Entry{}},
	})
	require.NoError(t, err)

	pub := &recorder{failing: true}
	relay := mongorelay.NewRelay(coll, pub, mongorelay.Config{Purge: bson.M{"deleted": true}})
	require.Error(t, relay.Sweep(ctx))
	n, err := coll.CountDocuments(ctx, bson.M{"outbox.0": bson.M{"$exists": true}})
	require.NoError(t, err)
	assert.EqualValues(t, 2, n, "nothing is cleared while the broker refuses")

	pub.failing = false
	require.NoError(t, relay.Sweep(ctx))
	assert.Equal(t, []string{"a1", "a2", "c1"}, pub.ids())
	n, err = coll.CountDocuments(ctx, bson.M{"outbox.0": bson.M{"$exists": true}})
	require.NoError(t, err)
	assert.Zero(t, n)

	// Drained tombstones are gone; live documents stay.
	var ids []string
	cur, err := coll.Find(ctx, bson.M{})
	require.NoError(t, err)
	var docs []bson.M
	require.NoError(t, cur.All(ctx, &docs))
	for _, d := range docs {
		ids = append(ids, d["_id"].(string))
	}
	assert.ElementsMatch(t, []string{"a", "b"}, ids)

	require.NoError(t, relay.Sweep(ctx))
	assert.Len(t, pub.ids(), 3, "a second sweep publishes nothing again")
}

func TestRunSweepsWhenNudged(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	coll := collection(t)
	pub := &recorder{}
	relay := mongorelay.NewRelay(coll, pub, mongorelay.Config{Interval: time.Hour})
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()

	_, err := coll.InsertOne(ctx, bson.M{"_id": "n", "outbox": []outbox.Entry{entry(t, "n1")}})
	require.NoError(t, err)
	relay.Nudge()
	require.Eventually(t, func() bool { return len(pub.ids()) == 1 }, waitTimeout, tick)
	cancel()
	require.NoError(t, <-done)
}

const (
	waitTimeout = 10 * time.Second
	tick        = 5 * time.Millisecond
)

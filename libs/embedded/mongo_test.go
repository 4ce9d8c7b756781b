package embedded_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/embedded"
)

func startMongo(t testing.TB, dir string) *embedded.Mongo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	began := time.Now()
	m, err := embedded.StartMongo(ctx, embedded.MongoConfig{Dir: dir})
	require.NoError(t, err)
	t.Logf("FerretDB ready in %s at %s", time.Since(began), m.URI())
	t.Cleanup(m.Close)
	return m
}

func connect(t testing.TB, uri string) *mongo.Client {
	t.Helper()
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(5 * time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	return client
}

func TestMongoRoundTripAndRestart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir() + "/data dir" // missing, and with a space, on purpose

	m := startMongo(t, dir)
	client := connect(t, m.URI())
	coll := client.Database("embedded").Collection("things")
	_, err := coll.InsertOne(ctx, bson.M{"_id": "a", "n": 1})
	require.NoError(t, err)

	var got struct{ N int }
	require.NoError(t, coll.FindOne(ctx, bson.M{"_id": "a"}).Decode(&got))
	assert.Equal(t, 1, got.N)

	require.NoError(t, client.Disconnect(ctx))
	m.Close()
	m.Close()

	// The data survives a restart on the same directory.
	m2 := startMongo(t, dir)
	client2 := connect(t, m2.URI())
	n, err := client2.Database("embedded").Collection("things").CountDocuments(ctx, bson.M{})
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
}

func TestMongoCloseWithConnectedClient(t *testing.T) {
	t.Parallel()
	m := startMongo(t, t.TempDir())
	client := connect(t, m.URI())
	require.NoError(t, client.Ping(t.Context(), nil))

	// FerretDB alone would give the open connection 3 s to hang up; Close cuts it.
	began := time.Now()
	m.Close()
	assert.Less(t, time.Since(began), 2*time.Second)
	assert.Error(t, client.Ping(t.Context(), nil))
}

// TestMongoWritesAreAtomic covers what FerretDB alone gets wrong: it applies updates as
// read, modify, write back, so concurrent ones overwrite each other.
func TestMongoWritesAreAtomic(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := startMongo(t, t.TempDir())
	coll := connect(t, m.URI()).Database("atomic").Collection("c")
	const workers, perWorker, tasks = 8, 25, 40

	t.Run("$inc", func(t *testing.T) {
		_, err := coll.InsertOne(ctx, bson.M{"_id": "counter", "n": 0})
		require.NoError(t, err)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range perWorker {
					_, err := coll.UpdateOne(ctx, bson.M{"_id": "counter"}, bson.M{"$inc": bson.M{"n": 1}})
					assert.NoError(t, err)
				}
			})
		}
		wg.Wait()
		var got struct{ N int }
		require.NoError(t, coll.FindOne(ctx, bson.M{"_id": "counter"}).Decode(&got))
		assert.Equal(t, workers*perWorker, got.N)
	})

	t.Run("claims with FindOneAndUpdate", func(t *testing.T) {
		docs := make([]any, tasks)
		for i := range docs {
			docs[i] = bson.M{"_id": i, "state": "pending"}
		}
		_, err := coll.Database().Collection("tasks").InsertMany(ctx, docs)
		require.NoError(t, err)

		var mu sync.Mutex
		claims := map[int]int{}
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for {
					var task struct {
						ID int `bson:"_id"`
					}
					err := coll.Database().Collection("tasks").FindOneAndUpdate(ctx,
						bson.M{"state": "pending"}, bson.M{"$set": bson.M{"state": "taken", "by": w}}).Decode(&task)
					if errors.Is(err, mongo.ErrNoDocuments) {
						return
					}
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					claims[task.ID]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		assert.Len(t, claims, tasks)
		for id, n := range claims {
			assert.Equal(t, 1, n, "task %d claimed %d times", id, n)
		}
	})
}

func TestStartMongoErrors(t *testing.T) {
	t.Parallel()
	busy := startMongo(t, t.TempDir())
	busyAddr := busy.URI()[len("mongodb://") : len(busy.URI())-1]

	tests := []struct {
		name string
		cfg  embedded.MongoConfig
	}{
		{name: "no dir", cfg: embedded.MongoConfig{}},
		{name: "bad addr", cfg: embedded.MongoConfig{Dir: t.TempDir(), Addr: "nope"}},
		{name: "port in use", cfg: embedded.MongoConfig{Dir: t.TempDir(), Addr: busyAddr}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := embedded.StartMongo(t.Context(), tt.cfg)
			if m != nil {
				m.Close()
			}
			require.Error(t, err)
			assert.Nil(t, m)
		})
	}
}

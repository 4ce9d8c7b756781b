package mongostore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/runs/internal/mongostore"
)

// A submit sent again under a key held already (its first answer lost, or cut by its
// deadline on a loaded store) reads the key and writes nothing: it does not queue behind
// the writes that slowed the first. An expired key is still taken over by a write.
func TestHoldKeyHeldReadsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	writes := map[string]int{}
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		switch e.CommandName {
		case "insert", "update", "findAndModify", "delete":
			mu.Lock()
			writes[e.CommandName]++
			mu.Unlock()
		}
	}}
	client, err := mongo.Connect(options.Client().ApplyURI(testkit.MongoURI(t)).SetMonitor(monitor))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	s := mongostore.New(client.Database(testkit.Database(t)), nil)
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range writes {
			n += c
		}
		return n
	}

	now := time.Now().UTC()
	held, err := s.HoldKey(ctx, "infra/deploy/k1", "run-1", now)
	require.NoError(t, err)
	require.Equal(t, "run-1", held)
	before := count()
	held, err = s.HoldKey(ctx, "infra/deploy/k1", "run-2", now.Add(time.Second))
	require.NoError(t, err)
	assert.Equal(t, "run-1", held, "the first submit's run")
	assert.Equal(t, before, count(), "no write for a key held: %v", writes)

	later := now.Add(mongostore.KeyTTL + time.Minute)
	held, err = s.HoldKey(ctx, "infra/deploy/k1", "run-3", later)
	require.NoError(t, err)
	assert.Equal(t, "run-3", held, "an expired key is taken over")
}

package workflows_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/workflows"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// The service follows team events: duplicates change nothing, and a late deletion of an
// older incarnation does not remove a team created again under the same name.
func TestFollowsTeamEventsIdempotently(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	client, err := mongox.Connect(ctx, testkit.MongoURI(t))
	require.NoError(t, err)
	db := client.Database(testkit.Database(t))
	kcfg := kafkax.Config{Brokers: testkit.KafkaBrokers(t), TopicPrefix: testkit.TopicPrefix(t)}
	require.NoError(t, kafkax.EnsureTopics(ctx, kcfg, 1, events.TeamEvents))
	producer := kafkax.NewProducer(kcfg)
	defer producer.Close()

	svc, err := workflows.New(ctx, workflows.Config{GroupID: kcfg.TopicPrefix + "workflows"}, workflows.Deps{
		DB: db, Kafka: kcfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = svc.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = client.Disconnect(context.Background())
	})

	publish := func(id, typ string, data any) {
		e, err := events.New(id, events.Source("identity"), typ, "/team/infra", data)
		require.NoError(t, err)
		require.NoError(t, producer.Publish(ctx, events.TeamEvents, "infra", e))
	}
	created := events.TeamCreated{ID: "a1", Name: "infra", DisplayName: "Infra", CreationDate: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	publish("team-created-a1", events.TypeTeamCreated, created)
	publish("team-created-a1", events.TypeTeamCreated, created)
	waitFor(t, db, bson.M{"_id": "infra", "teamId": "a1", "displayName": "Infra"})

	publish("team-deleted-a1", events.TypeTeamDeleted, events.TeamDeleted{ID: "a1", Name: "infra"})
	publish("team-created-b2", events.TypeTeamCreated, events.TeamCreated{ID: "b2", Name: "infra", DisplayName: "Infra 2"})
	publish("team-deleted-a1", events.TypeTeamDeleted, events.TeamDeleted{ID: "a1", Name: "infra"})
	publish("marker", events.TypeTeamCreated, events.TeamCreated{ID: "m", Name: "marker"})
	waitFor(t, db, bson.M{"_id": "marker"})

	var docs []bson.M
	cur, err := db.Collection("teams").Find(ctx, bson.M{"_id": "infra"})
	require.NoError(t, err)
	require.NoError(t, cur.All(ctx, &docs))
	require.Len(t, docs, 1)
	assert.Equal(t, "b2", docs[0]["teamId"])
}

func waitFor(t *testing.T, db *mongo.Database, filter bson.M) {
	t.Helper()
	require.Eventually(t, func() bool {
		n, err := db.Collection("teams").CountDocuments(context.Background(), filter)
		return err == nil && n == 1
	}, 20*time.Second, 10*time.Millisecond, "team record %v", filter)
}

package mongostore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/outbox/mongorelay"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/identity/internal/mongostore"
	"github.com/baton-flow/baton/services/identity/internal/storetest"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// The Mongo stores keep the contract on the embedded MongoDB-wire server (or the MongoDB
// the test environment names).
func TestStoreContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Stores {
		ctx := context.Background()
		client, err := mongox.Connect(ctx, testkit.MongoURI(t))
		require.NoError(t, err)
		t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
		db := client.Database(testkit.Database(t))
		teams, err := mongostore.NewTeams(ctx, db)
		require.NoError(t, err)
		users, err := mongostore.NewUsers(ctx, db)
		require.NoError(t, err)
		tokens, err := mongostore.NewTokens(ctx, db)
		require.NoError(t, err)
		system := mongostore.NewSystem(db)
		return storetest.Stores{
			Teams: teams, TokenTeams: mongostore.NewTokenTeams(db), Users: users, Tokens: tokens,
			Params: mongostore.NewParams(db), System: system,
			NewRelay: func(p storetest.Publisher) storetest.Relay {
				return mongorelay.NewRelay(teams.Collection(), p, mongorelay.Config{Purge: mongostore.TombstoneFilter})
			},
		}
	})
}

package mongostore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/schedules/internal/mongostore"
	"github.com/baton-flow/baton/services/schedules/internal/storetest"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// The contract, on a database of its own of the test server: the embedded MongoDB-wire
// server (FerretDB), or a real MongoDB with BATON_TEST_INFRA=containers.
func TestStoreContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) storetest.Store {
			ctx := context.Background()
			client, err := mongox.Connect(ctx, testkit.MongoURI(t))
			require.NoError(t, err)
			t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
			box, err := secrets.FromString(mustKey(t))
			require.NoError(t, err)
			db := client.Database(testkit.Database(t))
			s := mongostore.New(db, box)
			require.NoError(t, s.EnsureIndexes(ctx))
			return onDB{s, db}
		},
		AtRest: func(t *testing.T, s storetest.Store) []byte {
			ctx := context.Background()
			cur, err := s.(onDB).db.Collection("schedules").Find(ctx, bson.M{})
			require.NoError(t, err)
			var all []byte
			for cur.Next(ctx) {
				all = append(all, cur.Current.String()...)
			}
			require.NoError(t, cur.Err())
			return all
		},
	})
}

// onDB is a store with its database, which the test reads at rest.
type onDB struct {
	*mongostore.Store
	db *mongo.Database
}

func mustKey(t *testing.T) string {
	t.Helper()
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	return key
}

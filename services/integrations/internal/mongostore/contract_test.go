package mongostore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/integrations/internal/mongostore"
	"github.com/baton-flow/baton/services/integrations/internal/storetest"
)

// The contract, on a database of its own of the test server: the embedded MongoDB-wire
// server (FerretDB), or a real MongoDB with BATON_TEST_INFRA=containers.
func TestStoreContract(t *testing.T) {
	t.Parallel()
	// onDB is where a test's stores keep their data, which a reopening and the reading
	// at rest look at.
	type onDB struct {
		db  *mongo.Database
		box *secrets.Box
	}
	open := func(t *testing.T, db *mongo.Database, box *secrets.Box) storetest.Stores {
		ctx := context.Background()
		chat := mongostore.NewChatStore(db, box)
		require.NoError(t, chat.EnsureIndexes(ctx))
		codehost := mongostore.NewCodeHostStore(db)
		require.NoError(t, codehost.EnsureIndexes(ctx))
		receipts := mongostore.NewReceipts(db)
		require.NoError(t, receipts.EnsureIndexes(ctx))
		deliveries := mongostore.NewDeliveries(db)
		require.NoError(t, deliveries.EnsureIndexes(ctx))
		return storetest.Stores{Chat: chat, CodeHost: codehost, Receipts: receipts, Deliveries: deliveries}
	}
	// where maps each test's chat store to its onDB.
	var where sync.Map
	recall := func(s storetest.Stores) onDB {
		v, _ := where.Load(s.Chat)
		return v.(onDB)
	}
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) storetest.Stores {
			client, err := mongox.Connect(context.Background(), testkit.MongoURI(t))
			require.NoError(t, err)
			t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
			key, err := secrets.GenerateKey()
			require.NoError(t, err)
			box, err := secrets.FromString(key)
			require.NoError(t, err)
			at := onDB{client.Database(testkit.Database(t)), box}
			s := open(t, at.db, at.box)
			where.Store(s.Chat, at)
			return s
		},
		// A process started anew: stores of its own over the same database.
		Reopen: func(t *testing.T, s storetest.Stores) storetest.Stores {
			was := recall(s)
			return open(t, was.db, was.box)
		},
		AtRest: func(t *testing.T, s storetest.Stores) []byte {
			ctx := context.Background()
			db := recall(s).db
			names, err := db.ListCollectionNames(ctx, bson.M{})
			require.NoError(t, err)
			var all []byte
			for _, name := range names {
				cur, err := db.Collection(name).Find(ctx, bson.M{})
				require.NoError(t, err)
				for cur.Next(ctx) {
					all = append(all, cur.Current.String()...)
				}
				require.NoError(t, cur.Err())
			}
			return all
		},
	})
}

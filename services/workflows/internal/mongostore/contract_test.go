package mongostore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/workflows/internal/mongostore"
	"github.com/baton-flow/baton/services/workflows/internal/storetest"
)

func TestMain(m *testing.M) { testkit.Main(m) }

const testKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

// The store on the MongoDB-wire server of the tests (the embedded one unless containers
// are asked for), each test in a database of its own.
func TestStoreContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Stores {
		client, err := mongox.Connect(context.Background(), testkit.MongoURI(t))
		require.NoError(t, err)
		t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
		box, err := secrets.FromString(testKey)
		require.NoError(t, err)
		db := client.Database(testkit.Database(t))
		defs, teams := mongostore.NewDefinitions(db, box), mongostore.NewTeams(db)
		return storetest.Stores{
			Definitions: defs, Teams: teams, Counter: teams,
			Other: mongostore.NewDefinitions(db, box),
			Run:   defs.RunCollector,
			AtRest: func(t *testing.T) string {
				return atRest(t, db)
			},
		}
	})
}

// atRest returns every document of the database as extended JSON, each compressed field
// (definitions, tasks, catalogs) decompressed after it.
func atRest(t *testing.T, db *mongo.Database) string {
	t.Helper()
	ctx := context.Background()
	names, err := db.ListCollectionNames(ctx, bson.M{})
	require.NoError(t, err)
	dec, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer dec.Close()
	var out strings.Builder
	for _, name := range names {
		cur, err := db.Collection(name).Find(ctx, bson.M{})
		require.NoError(t, err)
		var docs []bson.M
		require.NoError(t, cur.All(ctx, &docs))
		for _, d := range docs {
			raw, err := bson.MarshalExtJSON(d, false, false)
			require.NoError(t, err)
			fmt.Fprintf(&out, "%s %s\n", name, raw)
			for _, v := range d {
				if b, ok := v.(bson.Binary); ok {
					plain, err := dec.DecodeAll(b.Data, nil)
					require.NoError(t, err)
					out.Write(plain)
					out.WriteByte('\n')
				}
			}
		}
	}
	return out.String()
}

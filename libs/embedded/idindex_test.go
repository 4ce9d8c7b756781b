package embedded

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// idLookupPlan answers SQLite's plan for FerretDB's lookup by _id in db.coll.
func idLookupPlan(t *testing.T, dir, db, coll string) string {
	t.Helper()
	u := url.URL{Scheme: "file", Path: filepath.Join(dir, db+sqliteExt), OmitHost: true, RawQuery: "_pragma=busy_timeout(10000)"}
	conn, err := sql.Open("sqlite", u.String())
	require.NoError(t, err)
	defer conn.Close()
	var table string
	require.NoError(t, conn.QueryRow(`SELECT table_name FROM "`+ferretCollections+`" WHERE name = ?`, coll).Scan(&table))
	rows, err := conn.Query(`EXPLAIN QUERY PLAN SELECT _ferretdb_sjson FROM "`+table+`" WHERE `+idLookup+` = ?`, `"a"`)
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	return strings.Join(plan, "; ")
}

func TestIDLookupsUseAnIndex(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	start := func() (*Mongo, *mongo.Database) {
		m, err := StartMongo(ctx, MongoConfig{Dir: dir})
		require.NoError(t, err)
		t.Cleanup(m.Close)
		client, err := mongo.Connect(options.Client().ApplyURI(m.URI()).SetServerSelectionTimeout(5 * time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
		return m, client.Database("ids")
	}
	m, db := start()

	// Every way a collection comes to be: an insert, an upsert, an explicit create, an
	// index creation, and an insert after the collection was dropped.
	_, err := db.Collection("inserted").InsertOne(ctx, bson.M{"_id": "a"})
	require.NoError(t, err)
	_, err = db.Collection("upserted").UpdateOne(ctx, bson.M{"_id": "a"}, bson.M{"$set": bson.M{"n": 1}}, options.UpdateOne().SetUpsert(true))
	require.NoError(t, err)
	require.NoError(t, db.CreateCollection(ctx, "created"))
	_, err = db.Collection("indexed").Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "n", Value: 1}}})
	require.NoError(t, err)
	_, err = db.Collection("dropped").InsertOne(ctx, bson.M{"_id": "a"})
	require.NoError(t, err)
	require.NoError(t, db.Collection("dropped").Drop(ctx))
	_, err = db.Collection("dropped").InsertOne(ctx, bson.M{"_id": "a"})
	require.NoError(t, err)

	colls := []string{"inserted", "upserted", "created", "indexed", "dropped"}
	for _, c := range colls {
		assert.Contains(t, idLookupPlan(t, dir, "ids", c), "USING INDEX baton_id_", c)
	}

	// Data from before the index existed gets it at the next start.
	m.Close()
	u := url.URL{Scheme: "file", Path: filepath.Join(dir, "ids"+sqliteExt), OmitHost: true}
	conn, err := sql.Open("sqlite", u.String())
	require.NoError(t, err)
	rows, err := conn.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'baton_id_%'`)
	require.NoError(t, err)
	var ours []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		ours = append(ours, name)
	}
	require.NoError(t, rows.Close())
	require.Len(t, ours, len(colls))
	for _, name := range ours {
		_, err := conn.Exec(`DROP INDEX "` + name + `"`)
		require.NoError(t, err)
	}
	require.NoError(t, conn.Close())
	assert.Contains(t, idLookupPlan(t, dir, "ids", "inserted"), "SCAN")

	_, db = start()
	for _, c := range colls {
		assert.Contains(t, idLookupPlan(t, dir, "ids", c), "USING INDEX baton_id_", c)
	}
	// And FerretDB still finds by _id.
	require.NoError(t, db.Collection("inserted").FindOne(ctx, bson.M{"_id": "a"}).Err())
}

package workflows_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/baton-flow/baton/libs/sqlitex"
)

// The stores a fixture's service runs on.
const (
	onMongo  = "mongo"
	onSQLite = "sqlite"
)

// bothStores runs test once with the service on its database in the shared MongoDB and
// once on a SQLite file of its own (Config.DatabaseURL).
func bothStores(t *testing.T, test func(t *testing.T, store string)) {
	for _, store := range []string{onMongo, onSQLite} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			test(t, store)
		})
	}
}

// file opens the fixture's SQLite file for the test's own reads.
func (f *fixture) file(t testing.TB) *sqlitex.DB {
	t.Helper()
	require.NotEmpty(t, f.path, "the service is not on SQLite")
	db, err := sqlitex.Open(context.Background(), f.path, sqlitex.Options{ReadConns: 1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// waitTeam waits until the service has recorded the team name as incarnation id.
func (f *fixture) waitTeam(t testing.TB, name, id string) {
	t.Helper()
	if f.path == "" {
		waitFor(t, f.db, bson.M{"_id": name, "teamId": id})
		return
	}
	db := f.file(t)
	require.Eventually(t, func() bool {
		var got string
		err := db.QueryRow(context.Background(), `SELECT team_id FROM teams WHERE name = ?`, name).Scan(&got)
		return err == nil && got == id
	}, 30*time.Second, 10*time.Millisecond, "team record %s %s", name, id)
}

// storedDocs returns what the service stored of workflows, by where it is: on MongoDB
// every document as extended JSON, its compressed tasks decompressed after it; on SQLite
// each stored revision's definition followed by its tasks.
func (f *fixture) storedDocs(t *testing.T) map[string]string {
	t.Helper()
	if f.path == "" {
		return storedDocs(t, f.db)
	}
	rows, err := f.file(t).Query(context.Background(), `SELECT ns, name, version, rev, def, tasks FROM versions`)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var ns, name string
		var version, rev int
		var def, tasks []byte
		require.NoError(t, rows.Scan(&ns, &name, &version, &rev, &def, &tasks))
		out[fmt.Sprintf("versions %s %s/%d.%d", ns, name, version, rev)] = string(def) + string(tasks)
	}
	require.NoError(t, rows.Err())
	return out
}

// storedWorkflows counts what the service keeps of workflows, teams apart, by table or
// collection.
func (f *fixture) storedWorkflows(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	if f.path == "" {
		colls, err := f.db.ListCollectionNames(context.Background(), bson.M{})
		require.NoError(t, err)
		for _, coll := range colls {
			if coll == "teams" {
				continue
			}
			n, err := f.db.Collection(coll).CountDocuments(context.Background(), bson.M{})
			require.NoError(t, err)
			out[coll] = n
		}
		return out
	}
	db := f.file(t)
	for _, table := range []string{"heads", "entries", "versions", "outbox"} {
		var n int64
		require.NoError(t, db.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n))
		out[table] = n
	}
	return out
}

// revisionCount counts the stored revisions of the workflows called name.
func (f *fixture) revisionCount(t *testing.T, name string) int64 {
	t.Helper()
	var n int64
	if f.path != "" {
		require.NoError(t, f.file(t).QueryRow(context.Background(), `SELECT count(*) FROM versions WHERE name = ?`, name).Scan(&n))
		return n
	}
	colls, err := f.db.ListCollectionNames(context.Background(), bson.M{})
	require.NoError(t, err)
	for _, c := range colls {
		if strings.HasPrefix(c, "workflowVersions") {
			count, err := f.db.Collection(c).CountDocuments(context.Background(), bson.M{"name": name})
			require.NoError(t, err)
			n += count
		}
	}
	return n
}

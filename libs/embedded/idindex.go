package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // the SQLite driver FerretDB itself uses
)

// FerretDB v1 looks documents up by _id with `WHERE _ferretdb_sjson->'$._id' = ?` (finds,
// updates and deletes whose filter is just {_id}), but it indexes _id as
// `_ferretdb_sjson->"_id"`. SQLite uses an expression index only for the expression
// written the same way, so every one of those lookups scans the table, parsing each
// document's JSON: at 20,000 documents a FindOne by _id took 16.7 ms and an UpdateOne
// 94 ms. idIndexer adds an index spelled as the lookups are (then 0.5 ms and 0.4 ms).
// FerretDB does not know of it and needs not: SQLite keeps it up to date and drops it with
// its table.
type idIndexer struct {
	dir string

	mu      sync.Mutex
	indexed map[string]bool // "db\x00collection"
}

// FerretDB's storage layout: a file per database, a metadata table naming each
// collection's table, and the document column.
const (
	sqliteExt         = ".sqlite"
	ferretCollections = "_ferretdb_collections"
	idLookup          = "_ferretdb_sjson->'$._id'"
)

func newIDIndexer(dir string) *idIndexer {
	return &idIndexer{dir: dir, indexed: map[string]bool{}}
}

// sweep indexes every collection of every database in the directory. It runs before
// FerretDB starts, so data written by an older build gets the index too.
func (x *idIndexer) sweep(ctx context.Context) error {
	files, err := filepath.Glob(filepath.Join(x.dir, "*"+sqliteExt))
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		errs = append(errs, x.index(ctx, strings.TrimSuffix(filepath.Base(f), sqliteExt), ""))
	}
	return errors.Join(errs...)
}

// ensure indexes collection coll of database db once; a later call for the same pair is
// free. A collection that does not exist (yet) is tried again next time.
func (x *idIndexer) ensure(ctx context.Context, db, coll string) {
	if db == "" || coll == "" {
		return
	}
	key := db + "\x00" + coll
	x.mu.Lock()
	done := x.indexed[key]
	x.mu.Unlock()
	if done {
		return
	}
	if x.index(ctx, db, coll) == nil {
		x.mu.Lock()
		x.indexed[key] = true
		x.mu.Unlock()
	}
}

// forget makes the next ensure look again, after a collection (or, with coll "", a whole
// database) was dropped and may come back as a new table.
func (x *idIndexer) forget(db, coll string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for key := range x.indexed {
		d, c, _ := strings.Cut(key, "\x00")
		if d == db && (coll == "" || c == coll) {
			delete(x.indexed, key)
		}
	}
}

// reset forgets every collection (after a rename, which moves tables between names).
func (x *idIndexer) reset() {
	x.mu.Lock()
	defer x.mu.Unlock()
	clear(x.indexed)
}

// index creates the lookup index on collection coll of database db, or on all of its
// collections when coll is "". A database file that does not exist is not created.
func (x *idIndexer) index(ctx context.Context, db, coll string) error {
	// A fresh handle each time: FerretDB deletes a dropped database's file, and a cached
	// handle would keep writing to the deleted one.
	u := url.URL{Scheme: "file", Path: filepath.Join(x.dir, db+sqliteExt), OmitHost: true,
		RawQuery: "mode=rw&_pragma=busy_timeout(10000)"}
	conn, err := sql.Open("sqlite", u.String())
	if err != nil {
		return err
	}
	defer conn.Close()

	q, args := `SELECT table_name FROM "`+ferretCollections+`"`, []any{}
	if coll != "" {
		q += ` WHERE name = ?`
		args = append(args, coll)
	}
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil && coll == "" && strings.Contains(err.Error(), "no such table") {
		return nil // a database file FerretDB has not set up: nothing to index
	}
	if err != nil {
		return fmt.Errorf("collections of %s: %w", db, err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			_ = rows.Close()
			return err
		}
		tables = append(tables, t)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	if coll != "" && len(tables) == 0 {
		return fmt.Errorf("collection %s.%s has no table yet", db, coll)
	}
	for _, t := range tables {
		// Table names are FerretDB's own (lower-case letters, digits, "_"), so quoting is enough.
		stmt := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (%s)`, "baton_id_"+t, t, idLookup)
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("index %s.%s: %w", db, t, err)
		}
	}
	return nil
}

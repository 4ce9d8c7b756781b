// Package sqlitestore keeps everything the identity service stores in one SQLite file
// (libs/sqlitex): teams and their members, users, tokens, global parameters, the settings
// and the activation state, and the team events not yet published. It is the store of a
// single-process Baton (standalone mode); mongostore keeps the same on MongoDB, and both
// pass the same contract suite (internal/storetest).
//
// Each table has real columns for what is looked up, filtered or sorted (a token's hash,
// id, team, user and creator; a team's name and status; a user's email and status) and
// keeps the rest of a record as JSON (doc), the domain's own type. Where a field is both a
// column and in the doc, the column is the truth: a record's version, a token's revocation
// and last use, which are changed without rewriting the doc. A token's dates are columns
// only, in milliseconds as MongoDB keeps them: a client may ask for an expiry past the
// year 9999, which JSON's dates cannot write.
//
// Every change is conditional: a read record is written back WHERE version = the version
// read, and a write that changed no row lost a race; it is read again and fn applied anew,
// a few times, before the caller is told to try again (CONCURRENT_MODIFICATION), as the
// Mongo store does.
//
// What identity keeps from secrets is sealed or hashed by the use cases before it reaches
// a store (a token is kept by the SHA-256 of its secret, a password parameter's value
// sealed), so this store writes exactly what mongostore writes.
//
// Team events (team.created, team.deleted) are rows of the outbox table, written in the
// same transaction as the change that owes them; the Relay publishes them in order and
// deletes each once the broker acknowledged it. A deleted team's row goes at once: its
// event is in the outbox, so no tombstone is needed to carry it.
package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/jsonbody"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/sqlitex"
)

// maxAttempts bounds how often an update reads again and reapplies its change after losing
// a race with another writer.
const maxAttempts = 5

// errLost is a conditional write that changed no row: someone else wrote first.
var errLost = errors.New("lost a race")

// Store is every store of the identity service, on one SQLite database.
type Store struct {
	db *sqlitex.DB
	// own says Close closes db, which Open opened.
	own bool
	// nudge wakes the relay when events were stored.
	nudge chan struct{}
}

// Open opens (creating it if need be) the database file at path and brings its schema up
// to date. Close closes it.
func Open(ctx context.Context, path string) (*Store, error) {
	s, err := sqlitex.OpenStore(ctx, path, func(db *sqlitex.DB) (*Store, error) { return New(ctx, db) })
	if err != nil {
		return nil, err
	}
	s.own = true
	return s, nil
}

// New returns the store over db, its schema brought up to date.
func New(ctx context.Context, db *sqlitex.DB) (*Store, error) {
	if err := db.Migrate(ctx, migrations); err != nil {
		return nil, fmt.Errorf("identity store: %w", err)
	}
	return &Store{db: db, nudge: make(chan struct{}, 1)}, nil
}

// Close closes the database if Open opened it.
func (s *Store) Close() error {
	if !s.own {
		return nil
	}
	return s.db.Close()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// migrations are the schema's versions (sqlitex.DB.Migrate); a new version is a new
// entry, never an edit of one released.
var migrations = []string{`
CREATE TABLE teams (
	id       TEXT PRIMARY KEY,
	name     TEXT NOT NULL UNIQUE,
	status   TEXT NOT NULL,
	created  INTEGER NOT NULL,
	version  INTEGER NOT NULL,
	doc      TEXT NOT NULL
);
CREATE INDEX teams_created ON teams (created, id);
CREATE INDEX teams_status ON teams (status, name);

CREATE TABLE team_members (
	user_id TEXT NOT NULL,
	name    TEXT NOT NULL,
	team    TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
	PRIMARY KEY (user_id, name)
) WITHOUT ROWID;
CREATE INDEX team_members_team ON team_members (team);

CREATE TABLE outbox (
	seq      INTEGER PRIMARY KEY AUTOINCREMENT,
	event_id TEXT NOT NULL,
	topic    TEXT NOT NULL,
	key      TEXT NOT NULL,
	event    BLOB NOT NULL
);

CREATE TABLE users (
	id      TEXT PRIMARY KEY,
	email   TEXT NOT NULL UNIQUE,
	name    TEXT NOT NULL,
	status  TEXT NOT NULL,
	created INTEGER NOT NULL,
	version INTEGER NOT NULL,
	doc     TEXT NOT NULL
);
CREATE INDEX users_status_name ON users (status, name);
CREATE INDEX users_name ON users (name, id);
CREATE INDEX users_created ON users (created, id);

CREATE TABLE tokens (
	hash            TEXT PRIMARY KEY,
	id              TEXT NOT NULL UNIQUE,
	type            TEXT NOT NULL,
	name            TEXT NOT NULL,
	principal       TEXT NOT NULL,
	team            TEXT NOT NULL,
	user_id         TEXT NOT NULL,
	creator         TEXT NOT NULL,
	creator_user_id TEXT NOT NULL,
	created         INTEGER NOT NULL,
	expires         INTEGER,
	revoked         INTEGER,
	last_used       INTEGER,
	doc             TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX tokens_creator ON tokens (creator, created);
CREATE INDEX tokens_team ON tokens (team, created);
CREATE INDEX tokens_user ON tokens (user_id, created);
CREATE INDEX tokens_creator_user ON tokens (creator_user_id);
CREATE INDEX tokens_created ON tokens (created, id);

CREATE TABLE token_ancestors (
	ancestor TEXT NOT NULL,
	token    TEXT NOT NULL REFERENCES tokens (hash) ON DELETE CASCADE,
	PRIMARY KEY (ancestor, token)
) WITHOUT ROWID;

CREATE TABLE params (
	name    TEXT PRIMARY KEY,
	version INTEGER NOT NULL,
	doc     TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE system (
	id      TEXT PRIMARY KEY,
	version INTEGER NOT NULL,
	doc     TEXT NOT NULL
) WITHOUT ROWID;
`}

// millis is t as stored: milliseconds since the epoch, as MongoDB keeps dates.
func millis(t time.Time) int64 { return t.UnixMilli() }

// fromMillis is a stored date, in UTC.
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// optMillis is an optional date as stored: NULL for none.
func optMillis(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

// encode is a record's doc.
func encode(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return raw, nil
}

// decode reads a record's doc; numbers in values of any type stay exact (json.Number), as
// the Mongo store gives them back.
func decode(raw []byte, v any) error {
	if err := jsonbody.DecodeNumbers(raw, v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return nil
}

// placeholders is "?, ?, …" for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// search is one page of a search: the rows of table (its columns cols) that conds (with
// args) select, sorted on sort (a column) then id, both ways alike, and how many it selects
// in all; scan reads the rows.
type search[T any] struct {
	table, cols, sort string
	conds             []string
	args              []any
	scan              func(*sql.Rows) ([]T, error)
}

func (q search[T]) run(ctx context.Context, db *sqlitex.DB, p page.Request) ([]T, int64, error) {
	where := ""
	if len(q.conds) > 0 {
		where = " WHERE " + strings.Join(q.conds, " AND ")
	}
	var total int64
	if err := db.QueryRow(ctx, "SELECT count(*) FROM "+q.table+where, q.args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count %s: %w", q.table, err)
	}
	dir := " ASC"
	if p.Desc {
		dir = " DESC"
	}
	// Size 0 is every row after the offset.
	limit := int64(p.Size)
	if limit <= 0 {
		limit = -1
	}
	rows, err := db.Query(ctx, "SELECT "+q.cols+" FROM "+q.table+where+" ORDER BY "+q.sort+dir+", id"+dir+" LIMIT ? OFFSET ?",
		append(q.args, limit, p.Offset())...)
	if err != nil {
		return nil, 0, fmt.Errorf("find %s: %w", q.table, err)
	}
	out, err := q.scan(rows)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// scanner is a row to read: *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// scanAll reads every row with scan and closes rows; what names the rows in errors.
func scanAll[T any](rows *sql.Rows, scan func(scanner) (T, error), what string) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return out, nil
}

// busy is the answer to an update that lost every race it ran.
func busy(what string) error {
	return apperr.New(apperr.ConcurrentModification, "%s is being changed by others; try again.", what)
}

// labelsMatch is the condition that a record's labels (in its doc) hold every pair of want.
func labelsMatch(want map[string]string) (string, []any) {
	var conds []string
	var args []any
	for k, v := range want {
		conds = append(conds, `EXISTS (SELECT 1 FROM json_each(doc, '$.Labels') WHERE json_each.key = ? AND json_each.value = ?)`)
		args = append(args, k, v)
	}
	return strings.Join(conds, " AND "), args
}

// Package sqlitestore keeps the integrations service's records in a SQLite file of its own
// (libs/sqlitex): the store of a single-process Baton (standalone mode), for one
// integrations replica. mongostore keeps the same on MongoDB, and both pass the same
// contract suite (internal/storetest).
//
// One file holds four stores, each a port of the app: Chat (the chat app's installs,
// links, channels, replayed signatures and posted messages), CodeHost (installations and
// the records of code-host deliveries), Receipts (the inbound events' deduplication) and
// Deliveries (the queues of status events owed to the sinks). Each table has real
// columns for what is looked up, filtered, ordered or written on a condition, and keeps
// the rest of a record as JSON; the chat installs' bot tokens are sealed in it, as
// mongostore seals them.
//
// Every write is one write function of the file's one writer (sqlitex), which commits
// those of concurrent callers together: a conditional write is one statement (WHERE
// version = the version read, WHERE owner = the holder, ON CONFLICT … WHERE older), and
// zero rows changed is the domain's conflict. A write is answered once it is on disk, so
// a delivery queue's place (its next event), what it holds and what it counts are, after
// a crash, what they were at its last answered write.
//
// Times are milliseconds since the epoch, as MongoDB keeps them; 0 is the zero time.
package sqlitestore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/sqlitex"
)

// Store is the integrations service's file: its four stores share the database.
type Store struct {
	db  *sqlitex.DB
	box secrets.Sealer
	// own says Close closes db, which Open opened.
	own bool
	// closed makes Close's work happen once.
	closed sync.Once
}

// Open opens (creating it if need be) the database file at path and brings its schema up
// to date; box seals the chat installs' bot tokens. Close closes it.
func Open(ctx context.Context, path string, box secrets.Sealer) (*Store, error) {
	s, err := sqlitex.OpenStore(ctx, path, func(db *sqlitex.DB) (*Store, error) { return New(ctx, db, box) })
	if err != nil {
		return nil, err
	}
	s.own = true
	return s, nil
}

// New returns the store over db, its schema brought up to date, and lets go of the
// delivery queues an earlier process held in it.
//
// A file serves one integrations replica: the queues held when it opens are those of the
// process before, which is gone. Let go, they are delivered at once rather than once
// their leases lapse. Were two replicas pointed at one file all the same, an event sent
// twice is one a sink drops by its id.
func New(ctx context.Context, db *sqlitex.DB, box secrets.Sealer) (*Store, error) {
	if box == nil {
		return nil, fmt.Errorf("integrations store: a Sealer is required")
	}
	if err := db.Migrate(ctx, migrations); err != nil {
		return nil, fmt.Errorf("integrations store: %w", err)
	}
	err := db.Write(ctx, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(qLetGo)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("integrations store: let go of the delivery queues of the process before: %w", err)
	}
	return &Store{db: db, box: box}, nil
}

// Close closes the database if Open opened it; closing again does nothing.
func (s *Store) Close() error {
	if !s.own {
		return nil
	}
	var err error
	s.closed.Do(func() { err = s.db.Close() })
	return err
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Path is the database file's path.
func (s *Store) Path() string { return s.db.Path() }

// Chat is the chat app's store in the file.
func (s *Store) Chat() *Chat { return &Chat{db: s.db, box: s.box} }

// CodeHost is the code-host app's store in the file.
func (s *Store) CodeHost() *CodeHost { return &CodeHost{db: s.db} }

// Receipts are the inbound events' records in the file.
func (s *Store) Receipts() *Receipts { return &Receipts{db: s.db} }

// Deliveries are the sinks' queues in the file.
func (s *Store) Deliveries() *Deliveries { return &Deliveries{db: s.db} }

// migrations are the schema's versions (sqlitex.DB.Migrate); a new version is a new
// entry, never an edit of one released.
//
// The records that expire carry expires, which the sweeps read by index. A delivery
// queue's recent and held are JSON text that its writes change in place (json_set,
// json_remove): the events it recorded last, and those it holds itself by "s<seq>".
var migrations = []string{`
CREATE TABLE chat_signatures (
	signature TEXT PRIMARY KEY,
	expires   INTEGER NOT NULL
);
CREATE INDEX chat_signatures_expires ON chat_signatures (expires);
CREATE TABLE chat_installs (
	workspace TEXT PRIMARY KEY,
	doc       BLOB NOT NULL
);
CREATE TABLE chat_links (
	workspace TEXT NOT NULL,
	chat_user TEXT NOT NULL,
	doc       BLOB NOT NULL,
	PRIMARY KEY (workspace, chat_user)
);
CREATE TABLE chat_run_channels (
	run       TEXT PRIMARY KEY,
	workspace TEXT NOT NULL,
	channel   TEXT NOT NULL,
	expires   INTEGER NOT NULL
);
CREATE INDEX chat_run_channels_expires ON chat_run_channels (expires);
CREATE TABLE chat_team_channels (
	team      TEXT PRIMARY KEY,
	workspace TEXT NOT NULL,
	channel   TEXT NOT NULL
);
CREATE TABLE chat_posted (
	key     TEXT PRIMARY KEY,
	expires INTEGER NOT NULL
);
CREATE INDEX chat_posted_expires ON chat_posted (expires);
CREATE TABLE chat_action_messages (
	action    TEXT NOT NULL,
	workspace TEXT NOT NULL,
	channel   TEXT NOT NULL,
	expires   INTEGER NOT NULL,
	doc       BLOB NOT NULL,
	PRIMARY KEY (action, workspace, channel)
);
CREATE INDEX chat_action_messages_expires ON chat_action_messages (expires);

CREATE TABLE codehost_installations (
	id          INTEGER PRIMARY KEY,
	team        TEXT,
	linked_by   TEXT NOT NULL DEFAULT '',
	linked_at   INTEGER NOT NULL DEFAULT 0,
	link_issued INTEGER NOT NULL DEFAULT 0,
	version     INTEGER NOT NULL,
	doc         BLOB NOT NULL
);
CREATE INDEX codehost_installations_team ON codehost_installations (team) WHERE team IS NOT NULL;
CREATE TABLE codehost_deliveries (
	id       TEXT PRIMARY KEY,
	received INTEGER NOT NULL,
	doc      BLOB NOT NULL
);
CREATE INDEX codehost_deliveries_received ON codehost_deliveries (received);

CREATE TABLE event_receipts (
	key      TEXT PRIMARY KEY,
	team     TEXT NOT NULL,
	workflow TEXT NOT NULL,
	run_id   TEXT NOT NULL,
	created  INTEGER NOT NULL,
	run      BLOB NOT NULL
);
CREATE INDEX event_receipts_created ON event_receipts (created);

CREATE TABLE sink_queues (
	id          TEXT PRIMARY KEY,
	sink        TEXT NOT NULL,
	run         TEXT NOT NULL,
	gen         TEXT NOT NULL,
	last        INTEGER NOT NULL,
	next        INTEGER NOT NULL,
	recent      TEXT NOT NULL,
	attempt     INTEGER NOT NULL,
	due         INTEGER NOT NULL,
	last_error  TEXT NOT NULL,
	owner       TEXT NOT NULL,
	lease_until INTEGER NOT NULL,
	version     INTEGER NOT NULL,
	held        TEXT NOT NULL
);
CREATE INDEX sink_queues_due ON sink_queues (due, owner, lease_until);
CREATE INDEX sink_queues_owner ON sink_queues (owner) WHERE owner != '';
CREATE TABLE sink_events (
	key      TEXT PRIMARY KEY,
	queue    TEXT NOT NULL,
	event_id TEXT NOT NULL,
	body     BLOB NOT NULL,
	recorded INTEGER NOT NULL
);
CREATE INDEX sink_events_queue ON sink_events (queue);
CREATE INDEX sink_events_recorded ON sink_events (recorded);
CREATE TABLE sink_failures (
	id       TEXT PRIMARY KEY,
	sink     TEXT NOT NULL,
	run      TEXT NOT NULL,
	event_id TEXT NOT NULL,
	body     BLOB NOT NULL,
	attempts INTEGER NOT NULL,
	reason   TEXT NOT NULL,
	recorded INTEGER NOT NULL,
	given_up INTEGER NOT NULL
);
CREATE INDEX sink_failures_run ON sink_failures (run, id);
CREATE INDEX sink_failures_given_up ON sink_failures (given_up);
`}

// ms is t as stored: milliseconds since the epoch, 0 for the zero time.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMS reverses ms, in UTC.
func fromMS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.UnixMilli(n).UTC()
}

// execOn runs one statement on db's writer and answers how many rows it changed.
func execOn(ctx context.Context, db *sqlitex.DB, query string, args ...any) (int64, error) {
	var n int64
	err := db.Write(ctx, func(tx *sqlitex.Tx) error {
		var err error
		n, err = tx.ExecAffected(query, args...)
		return err
	})
	return n, err
}

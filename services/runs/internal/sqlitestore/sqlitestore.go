// Package sqlitestore keeps everything the runs service stores in one SQLite file
// (libs/sqlitex): runs and task runs, quotas and slots, replicas, heartbeats, idempotency
// keys, logs, actions, locks and the queues of generic attempts. It is the store of a
// single-process Baton (standalone mode); mongostore keeps the same on MongoDB, and both
// pass the same contract suite (internal/storetest).
//
// Each table has real columns for what is looked up, filtered, sorted or indexed (team,
// workflow, status, phase, creation date, owner, wakeAt, queue and date, …) and keeps the
// rest of a record as JSON (doc): the domain's own type, with what came from a secret
// sealed as mongostore seals it (internal/atrest). Where a field is both a column and in
// the doc, the column is the truth for the fields changed without rewriting the doc:
// owner, queued, phase and version of a run, version of a task run, an action or a lock.
//
// Every state change is one conditional statement or a few in one transaction: a run's
// step updates its changed task runs and the run, each WHERE version = the version it was
// read at, and zero rows changed is domain.ErrConflict. Writes go through the file's one
// writer, which commits those of concurrent callers together (group commit); each is
// answered once it is on disk.
//
// Runs in flight and runs that ended share the runs table (live says which): a run put
// away is the same row, no copy. The engine's lookups of runs in flight use partial
// indexes on live = 1, which stay as small as what is in flight.
package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/runs/internal/atrest"
)

// Sealer seals, for storage, what runs hold from secrets; *secrets.Box is one.
type Sealer = atrest.Sealer

// KeyTTL is how long an idempotency key names its run.
const KeyTTL = 24 * time.Hour

// updateTries bounds how often an update of an action or a lock reads and tries again
// after losing a race.
const updateTries = 100

// Store is every store of the runs service, on one SQLite database.
type Store struct {
	db  *sqlitex.DB
	box Sealer
	// own says Close closes db, which Open opened.
	own bool

	// stored are the runs noted stored (RunStored) whose counts are still marked held, by
	// month: the next write of that month's count, or SettleMonthly, unholds them.
	storedMu sync.Mutex
	stored   map[monthKey]map[string]bool
}

// Open opens (creating it if need be) the database file at path and brings its schema up
// to date. Close closes it.
func Open(ctx context.Context, path string, box Sealer) (*Store, error) {
	s, err := sqlitex.OpenStore(ctx, path, func(db *sqlitex.DB) (*Store, error) { return New(ctx, db, box) })
	if err != nil {
		return nil, err
	}
	s.own = true
	return s, nil
}

// New returns the store over db, its schema brought up to date. box seals, for storage,
// every value a run holds that came from a secret, and opens them on reading.
func New(ctx context.Context, db *sqlitex.DB, box Sealer) (*Store, error) {
	if err := db.Migrate(ctx, migrations); err != nil {
		return nil, fmt.Errorf("runs store: %w", err)
	}
	return &Store{db: db, box: box}, nil
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
CREATE TABLE runs (
	id            TEXT PRIMARY KEY,
	live          INTEGER NOT NULL,
	team          TEXT NOT NULL,
	workflow      TEXT NOT NULL,
	status        TEXT NOT NULL,
	phase         TEXT NOT NULL,
	trigger_by    TEXT NOT NULL,
	created       INTEGER NOT NULL,
	start_at      INTEGER,
	end_at        INTEGER,
	owner         TEXT,
	queued        INTEGER NOT NULL DEFAULT 0,
	wake_at       INTEGER,
	depth         INTEGER NOT NULL DEFAULT 0,
	ancestors     TEXT,
	owed_at       INTEGER,
	definition_id TEXT NOT NULL,
	version       INTEGER NOT NULL,
	doc           BLOB NOT NULL
);
CREATE INDEX runs_team_created ON runs (team, created, id);
CREATE INDEX runs_team_workflow ON runs (team, workflow, created);
CREATE INDEX runs_owner_wake ON runs (owner, wake_at) WHERE live = 1;
CREATE INDEX runs_live_team ON runs (team, workflow) WHERE live = 1;
CREATE INDEX runs_queued ON runs (queued, team) WHERE live = 1;
CREATE INDEX runs_live_wake ON runs (wake_at) WHERE live = 1;
CREATE INDEX runs_owed ON runs (owed_at) WHERE owed_at IS NOT NULL;

CREATE TABLE run_labels (
	label TEXT NOT NULL,
	run   TEXT NOT NULL,
	PRIMARY KEY (label, run)
) WITHOUT ROWID;
CREATE INDEX run_labels_run ON run_labels (run);

CREATE TABLE run_ancestors (
	ancestor TEXT NOT NULL,
	run      TEXT NOT NULL,
	PRIMARY KEY (ancestor, run)
) WITHOUT ROWID;
CREATE INDEX run_ancestors_run ON run_ancestors (run);

CREATE TABLE task_runs (
	run     TEXT NOT NULL,
	idx     INTEGER NOT NULL,
	version INTEGER NOT NULL,
	doc     BLOB NOT NULL,
	PRIMARY KEY (run, idx)
);

CREATE TABLE definitions (
	id  TEXT PRIMARY KEY,
	doc BLOB NOT NULL
);

CREATE TABLE slots (
	team TEXT NOT NULL,
	run  TEXT NOT NULL,
	PRIMARY KEY (team, run)
) WITHOUT ROWID;

CREATE TABLE monthly (
	team  TEXT NOT NULL,
	month TEXT NOT NULL,
	n     INTEGER NOT NULL,
	PRIMARY KEY (team, month)
) WITHOUT ROWID;

CREATE TABLE monthly_held (
	team  TEXT NOT NULL,
	month TEXT NOT NULL,
	run   TEXT NOT NULL,
	since INTEGER NOT NULL,
	PRIMARY KEY (team, month, run)
) WITHOUT ROWID;
CREATE INDEX monthly_held_since ON monthly_held (since);

CREATE TABLE idempotency (
	key     TEXT PRIMARY KEY,
	run     TEXT NOT NULL,
	created INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX idempotency_created ON idempotency (created);

CREATE TABLE replicas (
	id TEXT PRIMARY KEY,
	at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE heartbeats (
	task_run TEXT PRIMARY KEY,
	attempt  INTEGER NOT NULL,
	runner   TEXT NOT NULL,
	at       INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX heartbeats_at ON heartbeats (at);

CREATE TABLE logs (
	task_run TEXT NOT NULL,
	attempt  INTEGER NOT NULL,
	seq      INTEGER NOT NULL,
	text     TEXT NOT NULL,
	PRIMARY KEY (task_run, attempt, seq)
);

CREATE TABLE actions (
	id            TEXT PRIMARY KEY,
	team          TEXT NOT NULL,
	type          TEXT NOT NULL,
	status        TEXT NOT NULL,
	workflow      TEXT NOT NULL,
	workflow_name TEXT NOT NULL,
	run_id        TEXT NOT NULL,
	created       INTEGER NOT NULL,
	decided_at    INTEGER,
	unapplied     INTEGER NOT NULL,
	version       INTEGER NOT NULL,
	doc           BLOB NOT NULL
);
CREATE INDEX actions_team_created ON actions (team, created, id);
CREATE INDEX actions_team_name ON actions (team, workflow_name, id);
CREATE INDEX actions_team_status ON actions (team, status, id);
CREATE INDEX actions_run ON actions (run_id, created);
CREATE INDEX actions_unapplied ON actions (decided_at) WHERE unapplied = 1;

CREATE TABLE locks (
	team     TEXT NOT NULL,
	key      TEXT NOT NULL,
	version  INTEGER NOT NULL,
	notified INTEGER NOT NULL,
	doc      BLOB NOT NULL,
	PRIMARY KEY (team, key)
);
CREATE INDEX locks_untold ON locks (team, key) WHERE notified = 0;

CREATE TABLE lock_runs (
	run  TEXT NOT NULL,
	team TEXT NOT NULL,
	key  TEXT NOT NULL,
	PRIMARY KEY (run, team, key)
) WITHOUT ROWID;
CREATE INDEX lock_runs_lock ON lock_runs (team, key);

CREATE TABLE sequences (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO sequences (name, value) VALUES ('lock', 0);

CREATE TABLE queued (
	id    TEXT PRIMARY KEY,
	team  TEXT NOT NULL,
	queue TEXT NOT NULL,
	at    INTEGER NOT NULL,
	doc   BLOB NOT NULL
);
CREATE INDEX queued_queue ON queued (team, queue, at, id);
`, `
-- The child runs of a replica, which its reconciler looks at every few seconds for those
-- whose tree was stopped above them: a few, among the many runs waiting.
CREATE INDEX runs_owner_children ON runs (owner) WHERE live = 1 AND depth > 0;
`}

// nanos is t as stored in a time column: nanoseconds since the epoch, NULL for the zero
// time.
func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// fromNanos reverses nanos.
func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// encode is v as a doc.
func encode(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return raw, nil
}

// decode reads a doc into v.
func decode(raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decode %T: %w", v, err)
	}
	return nil
}

// placeholders is "?, ?, …" for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// anys is vals as arguments of a statement.
func anys[T any](vals []T) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}

// errRetry is a conditional write that lost its race: the caller reads again.
var errRetry = errors.New("lost a race")

func runNotFound(id string) error {
	return apperr.New(apperr.WorkflowRunNotFound, "Workflow run '%s' was not found.", id)
}

// where builds the WHERE clause of a search.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// in adds column IN (vals) unless vals is empty.
func (w *where) in(column string, vals []string) {
	if len(vals) > 0 {
		w.add(column+" IN ("+placeholders(len(vals))+")", anys(vals)...)
	}
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// Path is the database file's path.
func (s *Store) Path() string { return s.db.Path() }

// Package sqlitestore keeps what the workflows service stores in one SQLite file
// (libs/sqlitex): the catalogs of teams' workflows and of the templates, every version's
// revisions, the known teams with their workflow counters, and the workflow events owed to
// the broker. It is the store of a single-process Baton (standalone mode); mongostore keeps
// the same on MongoDB, and both pass the same contract suite (internal/storetest).
//
// A catalog is rows, not a snapshot: heads holds each namespace's change number (seq), and
// entries one row per workflow head (latest version, revisions, status, labels, creation
// date) keyed by (namespace, name). A change is one write: the head moves from the seq it
// was read at (UPDATE … WHERE ns = ? AND seq = ?; no row changed means another writer got
// there first, and the change is made again on the newer catalog), the heads that changed
// are written, and the events the change owes are queued in outbox, all in one transaction.
// Revisions are rows of versions, one per (namespace, name, version, revision), never
// changed once written; the definition and its tasks are the JSON the API reads and
// writes, with what came from a secret sealed as mongostore seals it (internal/atrest).
//
// Writes go through the file's one writer, which commits those of concurrent callers
// together (group commit); each is answered once it is on disk. A read of a catalog asks
// the head's seq (one lookup by primary key) and answers the catalog held in memory when
// it is that seq's; only a catalog changed since is read again. That cache serves every
// topology alike: a catalog of 10,000 workflows costs its decoding, not its lookup.
package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/workflows/internal/atrest"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// Sealer seals, for storage, what a workflow holds from a secret; *secrets.Box is one.
type Sealer = atrest.Sealer

const (
	// maxAttempts bounds the retries of a catalog change that lost the race to another.
	maxAttempts = 64
	// maxRevisionProbes bounds the revision numbers tried for one version.
	maxRevisionProbes = 64
	// garbageQueue bounds the revisions waiting to be collected.
	garbageQueue = 4096
	// catalogCacheSize bounds the catalogs held in memory, one per namespace.
	catalogCacheSize = 1024
	// templatesKey is the templates' namespace key; team names are slugs, never "~".
	templatesKey = "~templates"
)

// Store is every store of the workflows service on one SQLite database: the
// DefinitionStore of workflows and templates, the TeamStore and the QuotaCounter.
type Store struct {
	db  *sqlitex.DB
	box Sealer
	// own says Close closes db, which Open opened.
	own bool

	mu       sync.Mutex
	catalogs map[string]*domain.Catalog

	garbage chan garbage
	nudge   chan struct{}
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
// the values of password parameters and secret task params, and opens them on reading.
func New(ctx context.Context, db *sqlitex.DB, box Sealer) (*Store, error) {
	if err := db.Migrate(ctx, migrations); err != nil {
		return nil, fmt.Errorf("workflows store: %w", err)
	}
	return &Store{db: db, box: box, catalogs: map[string]*domain.Catalog{},
		garbage: make(chan garbage, garbageQueue), nudge: make(chan struct{}, 1)}, nil
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
CREATE TABLE heads (
	ns  TEXT PRIMARY KEY,
	seq INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE entries (
	ns      TEXT NOT NULL,
	name    TEXT NOT NULL,
	latest  INTEGER NOT NULL,
	revs    TEXT,
	status  TEXT NOT NULL,
	labels  TEXT,
	created INTEGER NOT NULL,
	PRIMARY KEY (ns, name)
) WITHOUT ROWID;

CREATE TABLE versions (
	id      INTEGER PRIMARY KEY,
	ns      TEXT NOT NULL,
	name    TEXT NOT NULL,
	version INTEGER NOT NULL,
	rev     INTEGER NOT NULL,
	author  TEXT NOT NULL,
	reason  TEXT NOT NULL,
	date    INTEGER NOT NULL,
	def     BLOB NOT NULL,
	tasks   BLOB
);
CREATE UNIQUE INDEX versions_key ON versions (ns, name, version, rev);

CREATE TABLE teams (
	name           TEXT PRIMARY KEY,
	team_id        TEXT NOT NULL,
	display_name   TEXT NOT NULL,
	created        INTEGER NOT NULL,
	workflow_count INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE outbox (
	seq   INTEGER PRIMARY KEY AUTOINCREMENT,
	ns    TEXT NOT NULL,
	id    TEXT NOT NULL,
	topic TEXT NOT NULL,
	key   TEXT NOT NULL,
	event BLOB NOT NULL
);
CREATE INDEX outbox_ns ON outbox (ns);
`}

// Statements of the hot paths, named for the test that checks each goes by an index.
const (
	qHeadSeq = `SELECT seq FROM heads WHERE ns = ?`
	qCatalog = `SELECT h.seq, e.name, e.latest, e.revs, e.status, e.labels, e.created
		FROM heads h LEFT JOIN entries e ON e.ns = h.ns WHERE h.ns = ?`
	qMoveHead    = `UPDATE heads SET seq = ? WHERE ns = ? AND seq = ?`
	qCreateHead  = `INSERT INTO heads (ns, seq) VALUES (?, ?) ON CONFLICT (ns) DO NOTHING`
	qPutEntry    = `INSERT OR REPLACE INTO entries (ns, name, latest, revs, status, labels, created) VALUES (?, ?, ?, ?, ?, ?, ?)`
	qRemoveEntry = `DELETE FROM entries WHERE ns = ? AND name = ?`
	qOwe         = `INSERT INTO outbox (ns, id, topic, key, event) VALUES (?, ?, ?, ?, ?)`
	qInsertRev   = `INSERT INTO versions (ns, name, version, rev, author, reason, date, def, tasks)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (ns, name, version, rev) DO NOTHING`
	qSummary = `SELECT author, reason, date, def FROM versions
		WHERE ns = ? AND name = ? AND version = ? AND rev = ?`
	qRevision = `SELECT author, reason, date, def, tasks FROM versions
		WHERE ns = ? AND name = ? AND version = ? AND rev = ?`
	qCollect       = `DELETE FROM versions WHERE ns = ? AND name = ? AND version = ? AND rev = ?`
	qFindTeam      = `SELECT team_id, display_name, created FROM teams WHERE name = ?`
	qReserve       = `UPDATE teams SET workflow_count = workflow_count + 1 WHERE name = ? AND team_id = ? AND workflow_count < ?`
	qRelease       = `UPDATE teams SET workflow_count = workflow_count - 1 WHERE name = ? AND team_id = ? AND workflow_count > 0`
	qOwed          = `SELECT seq, id, topic, key, event FROM outbox WHERE seq > 0 ORDER BY seq LIMIT ?`
	qPublished     = `DELETE FROM outbox WHERE seq <= ?`
	qDeleteVersion = `DELETE FROM versions WHERE ns = ?`
	qDeleteEntries = `DELETE FROM entries WHERE ns = ?`
	qDeleteHead    = `DELETE FROM heads WHERE ns = ?`
	qDeleteOwed    = `DELETE FROM outbox WHERE ns = ?`
)

func nsKey(ns domain.Namespace) string {
	if ns.IsTemplates() {
		return templatesKey
	}
	return ns.Team + "/" + ns.TeamID
}

// errLost: another writer moved the head first.
var errLost = errors.New("catalog head moved")

// Catalog returns the current catalog of ns: one lookup of its head, and the catalog
// itself read only when the one held in memory is not the head's.
func (s *Store) Catalog(ctx context.Context, ns domain.Namespace) (*domain.Catalog, error) {
	key := nsKey(ns)
	var seq int64
	err := s.db.QueryRow(ctx, qHeadSeq, key).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.NewCatalog(0, nil), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read catalog head %s: %w", key, err)
	}
	s.mu.Lock()
	c, ok := s.catalogs[key]
	s.mu.Unlock()
	if ok && c.Seq == seq {
		return c, nil
	}
	c, err = s.load(ctx, key)
	if err != nil {
		return nil, err
	}
	s.remember(key, c)
	return c, nil
}

// load reads the catalog of key, its seq and entries in one statement: one snapshot.
func (s *Store) load(ctx context.Context, key string) (*domain.Catalog, error) {
	rows, err := s.db.Query(ctx, qCatalog, key)
	if err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", key, err)
	}
	defer rows.Close()
	var seq int64
	var entries []domain.Entry
	for rows.Next() {
		var (
			name, status  sql.NullString
			latest, ctime sql.NullInt64
			revs, labels  []byte
		)
		if err := rows.Scan(&seq, &name, &latest, &revs, &status, &labels, &ctime); err != nil {
			return nil, fmt.Errorf("read catalog %s: %w", key, err)
		}
		if !name.Valid {
			continue // a head without entries
		}
		e := domain.Entry{Name: name.String, Latest: int(latest.Int64), Status: domain.Status(status.String),
			CreationDate: time.UnixMilli(ctime.Int64).UTC()}
		if len(revs) > 0 {
			if err := json.Unmarshal(revs, &e.Revs); err != nil {
				return nil, fmt.Errorf("decode catalog %s, %s: %w", key, e.Name, err)
			}
		}
		if len(labels) > 0 {
			if err := json.Unmarshal(labels, &e.Labels); err != nil {
				return nil, fmt.Errorf("decode catalog %s, %s: %w", key, e.Name, err)
			}
		}
		entries = append(entries, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read catalog %s: %w", key, err)
	}
	return domain.NewCatalog(seq, entries), nil
}

// remember holds c as key's catalog unless a later one is held already.
func (s *Store) remember(key string, c *domain.Catalog) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if held, ok := s.catalogs[key]; ok && held.Seq > c.Seq {
		return
	}
	if _, ok := s.catalogs[key]; !ok && len(s.catalogs) >= catalogCacheSize {
		for k := range s.catalogs { // any one: a dropped catalog is read again when asked
			delete(s.catalogs, k)
			break
		}
	}
	s.catalogs[key] = c
}

// UpdateCatalog stores the catalog fn makes from the current one as its successor, with
// the events fn owes, in one write conditional on the head's seq.
func (s *Store) UpdateCatalog(ctx context.Context, ns domain.Namespace, fn func(next *domain.Catalog) ([]outbox.Entry, error)) (*domain.Catalog, error) {
	key := nsKey(ns)
	for range maxAttempts {
		cur, err := s.Catalog(ctx, ns)
		if err != nil {
			return nil, err
		}
		next := cur.Next()
		owed, err := fn(next)
		if err != nil {
			return nil, err
		}
		rows, err := entryRows(key, next)
		if err != nil {
			return nil, err
		}
		err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
			var n int64
			var err error
			if cur.Seq == 0 {
				n, err = tx.ExecAffected(qCreateHead, key, next.Seq)
			} else {
				n, err = tx.ExecAffected(qMoveHead, next.Seq, key, cur.Seq)
			}
			if err != nil {
				return err
			}
			if n == 0 {
				return errLost
			}
			for _, r := range rows {
				if r.removed {
					_, err = tx.Exec(qRemoveEntry, key, r.name)
				} else {
					_, err = tx.Exec(qPutEntry, r.args...)
				}
				if err != nil {
					return err
				}
			}
			for _, o := range owed {
				if _, err := tx.Exec(qOwe, key, o.ID, o.Topic, o.Key, o.Event); err != nil {
					return err
				}
			}
			return nil
		})
		if errors.Is(err, errLost) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("store catalog %s: %w", key, err)
		}
		s.remember(key, next)
		if len(owed) > 0 {
			s.Nudge()
		}
		return next, nil
	}
	return nil, apperr.New(apperr.ConcurrentModification, "Too many changes at once; try again.")
}

// entryRow is the write of one changed head.
type entryRow struct {
	name    string
	removed bool
	args    []any
}

func entryRows(key string, next *domain.Catalog) ([]entryRow, error) {
	var out []entryRow
	for _, name := range next.Changed() {
		e, ok := next.Entry(name)
		if !ok {
			out = append(out, entryRow{name: name, removed: true})
			continue
		}
		var revs, labels []byte
		var err error
		if len(e.Revs) > 0 {
			if revs, err = json.Marshal(e.Revs); err != nil {
				return nil, fmt.Errorf("encode head of %s: %w", name, err)
			}
		}
		if len(e.Labels) > 0 {
			if labels, err = json.Marshal(e.Labels); err != nil {
				return nil, fmt.Errorf("encode head of %s: %w", name, err)
			}
		}
		out = append(out, entryRow{name: name, args: []any{key, e.Name, e.Latest, revs, string(e.Status), labels,
			e.CreationDate.UnixMilli()}})
	}
	return out, nil
}

// InsertRevision stores r under the first free revision number from r.Rev, in one write.
// A taken number belongs to a concurrent save of the same version, a save that died
// before its catalog change, or a deleted incarnation of the name; none of them is the
// catalog's, so the next number serves as well.
func (s *Store) InsertRevision(ctx context.Context, ns domain.Namespace, r domain.Revision) (int, error) {
	def := r.Workflow
	tasks := def.Tasks
	def.Tasks = nil
	params, err := atrest.SealParams(s.box, def.Params)
	if err != nil {
		return 0, fmt.Errorf("encode %s version %d: %w", r.Name, r.Version, err)
	}
	def.Params = params
	if tasks, err = atrest.SealTaskSecrets(s.box, tasks); err != nil {
		return 0, fmt.Errorf("encode tasks of %s version %d: %w", r.Name, r.Version, err)
	}
	rawDef, err := json.Marshal(def)
	if err != nil {
		return 0, fmt.Errorf("encode %s version %d: %w", r.Name, r.Version, err)
	}
	var rawTasks []byte
	if tasks != nil {
		if rawTasks, err = json.Marshal(tasks); err != nil {
			return 0, fmt.Errorf("encode tasks of %s version %d: %w", r.Name, r.Version, err)
		}
	}
	var date int64
	if r.Changelog.Date != nil {
		date = r.Changelog.Date.UnixMilli()
	}
	key, first := nsKey(ns), max(r.Rev, 1)
	got := 0
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		for rev := first; rev < first+maxRevisionProbes; rev++ {
			n, err := tx.ExecAffected(qInsertRev, key, r.Name, r.Version, rev, r.Changelog.Author, r.Changelog.Reason,
				date, rawDef, rawTasks)
			if err != nil {
				return err
			}
			if n == 1 {
				got = rev
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store %s version %d: %w", r.Name, r.Version, err)
	}
	if got == 0 {
		return 0, apperr.New(apperr.ConcurrentModification, "Too many saves of '%s' version %d at once; try again.", r.Name, r.Version)
	}
	return got, nil
}

// FindRevision reads one revision, by its unique index; a summary leaves the tasks unread.
func (s *Store) FindRevision(ctx context.Context, ns domain.Namespace, name string, version, rev int, load domain.Load) (domain.Revision, error) {
	var (
		author, reason string
		date           int64
		def, tasks     []byte
		err            error
	)
	if load == domain.LoadSummary {
		err = s.db.QueryRow(ctx, qSummary, nsKey(ns), name, version, rev).Scan(&author, &reason, &date, &def)
	} else {
		err = s.db.QueryRow(ctx, qRevision, nsKey(ns), name, version, rev).Scan(&author, &reason, &date, &def, &tasks)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Revision{}, apperr.New(apperr.WorkflowRevisionNotFound, "Version %d of '%s' was not found.", version, name)
	}
	if err != nil {
		return domain.Revision{}, fmt.Errorf("read %s version %d: %w", name, version, err)
	}
	r := domain.Revision{Name: name, Version: version, Rev: rev,
		Changelog: domain.Changelog{Author: author, Reason: reason, Date: domain.NewTime(time.UnixMilli(date))}}
	if err := json.Unmarshal(def, &r.Workflow); err != nil {
		return domain.Revision{}, fmt.Errorf("decode %s version %d: %w", name, version, err)
	}
	atrest.OpenParams(s.box, r.Workflow.Params)
	switch {
	case load == domain.LoadSummary || len(tasks) == 0:
	case load == domain.LoadRawTasks:
		r.Workflow.RawTasks = tasks
	default:
		if err := json.Unmarshal(tasks, &r.Workflow.Tasks); err != nil {
			return domain.Revision{}, fmt.Errorf("decode tasks of %s version %d: %w", name, version, err)
		}
		r.Workflow.Tasks = atrest.OpenTaskSecrets(s.box, r.Workflow.Tasks)
	}
	return r, nil
}

// garbage is a revision to collect.
type garbage struct {
	ns      string
	name    string
	version int
	rev     int
}

// CollectRevision queues a revision for RunCollector. A full queue drops it: garbage left
// behind costs room, not correctness.
func (s *Store) CollectRevision(ns domain.Namespace, name string, version, rev int) {
	select {
	case s.garbage <- garbage{ns: nsKey(ns), name: name, version: version, rev: rev}:
	default:
	}
}

// RunCollector deletes queued revisions until ctx ends, those queued together in one
// write.
func (s *Store) RunCollector(ctx context.Context) error {
	for {
		var batch []garbage
		select {
		case <-ctx.Done():
			return nil
		case g := <-s.garbage:
			batch = append(batch, g)
		}
	more:
		for len(batch) < 256 {
			select {
			case g := <-s.garbage:
				batch = append(batch, g)
			default:
				break more
			}
		}
		_ = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
			for _, g := range batch {
				if _, err := tx.Exec(qCollect, g.ns, g.name, g.version, g.rev); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// DeleteNamespace removes everything of a team incarnation in one write: its versions,
// heads and catalog, and the events its catalog still owes (the team's deletion is the
// event every service acts on).
func (s *Store) DeleteNamespace(ctx context.Context, ns domain.Namespace) error {
	if ns.IsTemplates() {
		return errors.New("the templates cannot be deleted as a whole")
	}
	key := nsKey(ns)
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		for _, q := range []string{qDeleteVersion, qDeleteEntries, qDeleteHead, qDeleteOwed} {
			if _, err := tx.Exec(q, key); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete the workflows of %s: %w", key, err)
	}
	s.mu.Lock()
	delete(s.catalogs, key)
	s.mu.Unlock()
	return nil
}

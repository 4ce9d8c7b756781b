// Package sqlitestore keeps the tasks service's catalogue in one SQLite file
// (libs/sqlitex). It is the store of a single-process Baton (standalone mode); mongostore
// keeps the same on MongoDB, and both pass the same contract suite (internal/storetest).
//
// Layout. A task's latest version is its row of `tasks`, keyed "global/<name>" or
// "team/<team>/<name>" as on MongoDB, with real columns for what is looked up, filtered
// and sorted (scope, team, name, status, creation date) and its body and history as JSON.
// Superseded versions are rows of `task_versions`, and label pairs rows of `task_labels`,
// both removed with their task (foreign keys ON DELETE CASCADE).
//
// Writes. A change of a task is one transaction: the version it supersedes is kept and
// the task's row updated WHERE rev = the revision read; a row unchanged means another
// writer came first, and the whole change is undone, read again and fn applied anew. So,
// unlike on MongoDB, a superseded version and the head that supersedes it are written
// together or not at all, and deleting a task takes its versions in the same commit.
//
// Bodies are the task's JSON text with password parameters sealed (internal/atrest), as
// mongostore writes them.
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
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/tasks/internal/atrest"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
)

// Sealer seals password parameters' defaults and values; *secrets.Box is one.
type Sealer = atrest.Sealer

// maxAttempts bounds how often an update reads again and reapplies its change after
// losing a race with another writer.
const maxAttempts = 5

// errLost is a conditional write that changed no row: someone else wrote first.
var errLost = errors.New("lost a race")

// Store is the TaskStore on a SQLite database.
type Store struct {
	db  *sqlitex.DB
	box Sealer
	// own says Close closes db, which Open opened.
	own bool
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

// New returns the store over db, its schema brought up to date. box seals password
// parameters' defaults and values.
func New(ctx context.Context, db *sqlitex.DB, box Sealer) (*Store, error) {
	if box == nil {
		return nil, errors.New("task store: a Sealer is required")
	}
	if err := db.Migrate(ctx, migrations); err != nil {
		return nil, fmt.Errorf("tasks store: %w", err)
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
CREATE TABLE tasks (
	id      TEXT PRIMARY KEY,
	scope   TEXT NOT NULL,
	team    TEXT NOT NULL,
	name    TEXT NOT NULL,
	latest  INTEGER NOT NULL,
	status  TEXT NOT NULL,
	created INTEGER NOT NULL,
	rev     INTEGER NOT NULL,
	body    TEXT NOT NULL,
	history TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX tasks_scope_team_created ON tasks (scope, team, created, id);

CREATE TABLE task_versions (
	task    TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	version INTEGER NOT NULL,
	body    TEXT NOT NULL,
	PRIMARY KEY (task, version)
) WITHOUT ROWID;

CREATE TABLE task_labels (
	task TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	pair TEXT NOT NULL,
	PRIMARY KEY (task, pair)
) WITHOUT ROWID;
CREATE INDEX task_labels_pair ON task_labels (pair);
`}

const (
	qHead    = `SELECT latest, rev, body, history FROM tasks WHERE id = ?`
	qVersion = `SELECT body FROM task_versions WHERE task = ? AND version = ?`
)

// headID is the key of a task's row.
func headID(ref domain.Ref) string {
	if ref.Scope == domain.ScopeTeam {
		return "team/" + ref.Team + "/" + ref.Name
	}
	return "global/" + ref.Name
}

// change is one entry of a task's history as stored.
type change struct {
	Version int       `json:"version"`
	Author  string    `json:"author"`
	Reason  string    `json:"reason,omitempty"`
	Date    time.Time `json:"date"`
}

func changeOf(t domain.Task) change {
	return change{Version: t.Version, Author: t.Changelog.Author, Reason: t.Changelog.Reason, Date: t.Changelog.Date.UTC()}
}

// head is a task's row as read.
type head struct {
	id      string
	latest  int
	rev     int64
	body    string
	history []change
}

func (s *Store) head(ctx context.Context, ref domain.Ref) (head, error) {
	h := head{id: headID(ref)}
	var history string
	err := s.db.QueryRow(ctx, qHead, h.id).Scan(&h.latest, &h.rev, &h.body, &history)
	if errors.Is(err, sql.ErrNoRows) {
		return head{}, domain.TaskNotFound(ref, 0)
	}
	if err != nil {
		return head{}, fmt.Errorf("find task %s: %w", ref, err)
	}
	if err := json.Unmarshal([]byte(history), &h.history); err != nil {
		return head{}, fmt.Errorf("task %s history: %w", ref, err)
	}
	return h, nil
}

func labelPairs(labels map[string]string) []string {
	out := make([]string, 0, len(labels))
	for k, v := range labels {
		out = append(out, k+"="+v)
	}
	return out
}

// setLabels replaces the label pairs of task id.
func setLabels(tx *sqlitex.Tx, id string, labels map[string]string) error {
	if _, err := tx.Exec(`DELETE FROM task_labels WHERE task = ?`, id); err != nil {
		return err
	}
	for _, p := range labelPairs(labels) {
		if _, err := tx.Exec(`INSERT INTO task_labels (task, pair) VALUES (?, ?)`, id, p); err != nil {
			return err
		}
	}
	return nil
}

// CreateTask stores t as the first version of a new task; a taken name fails with
// domain.TaskAlreadyExists.
func (s *Store) CreateTask(ctx context.Context, t domain.Task) error {
	body, err := atrest.Encode(s.box, t)
	if err != nil {
		return fmt.Errorf("encode task %s: %w", t.Ref(), err)
	}
	history, err := json.Marshal([]change{changeOf(t)})
	if err != nil {
		return fmt.Errorf("encode task %s: %w", t.Ref(), err)
	}
	id := headID(t.Ref())
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		if _, err := tx.Exec(`INSERT INTO tasks (id, scope, team, name, latest, status, created, rev, body, history) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
			id, string(t.Scope), t.Team, t.Name, t.Version, string(t.Status), t.CreationDate.UnixMilli(), string(body), string(history)); err != nil {
			return err
		}
		return setLabels(tx, id, t.Labels)
	})
	if sqlitex.IsUnique(err) {
		return domain.TaskAlreadyExists(t.Ref())
	}
	if err != nil {
		return fmt.Errorf("insert task %s: %w", t.Ref(), err)
	}
	return nil
}

// FindTask returns the latest version of a task.
func (s *Store) FindTask(ctx context.Context, ref domain.Ref) (domain.Task, error) {
	h, err := s.head(ctx, ref)
	if err != nil {
		return domain.Task{}, err
	}
	return atrest.Decode(s.box, []byte(h.body))
}

// FindTaskVersion returns one version of a task: the latest from its row, older ones from
// their own.
func (s *Store) FindTaskVersion(ctx context.Context, ref domain.Ref, version int) (domain.Task, error) {
	h, err := s.head(ctx, ref)
	if err != nil {
		return domain.Task{}, err
	}
	switch {
	case version == h.latest:
		return atrest.Decode(s.box, []byte(h.body))
	case version < 1 || version > h.latest:
		return domain.Task{}, domain.TaskNotFound(ref, version)
	}
	var body string
	err = s.db.QueryRow(ctx, qVersion, h.id, version).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Task{}, domain.TaskNotFound(ref, version)
	}
	if err != nil {
		return domain.Task{}, fmt.Errorf("find version %d of task %s: %w", version, ref, err)
	}
	return atrest.Decode(s.box, []byte(body))
}

// FindHistory returns the changelog of every version, oldest first.
func (s *Store) FindHistory(ctx context.Context, ref domain.Ref) ([]domain.VersionChange, error) {
	h, err := s.head(ctx, ref)
	if err != nil {
		return nil, err
	}
	out := make([]domain.VersionChange, len(h.history))
	for i, c := range h.history {
		out[i] = domain.VersionChange{Version: c.Version, Changelog: domain.Changelog{Author: c.Author, Reason: c.Reason, Date: c.Date.UTC()}}
	}
	return out, nil
}

// UpdateTask writes the version fn decides, conditionally on the revision read: a version
// one above the latest keeps the latest among the versions, in the same transaction.
func (s *Store) UpdateTask(ctx context.Context, ref domain.Ref, fn func(domain.Task) (domain.Task, error)) (domain.Task, error) {
	for range maxAttempts {
		h, err := s.head(ctx, ref)
		if err != nil {
			return domain.Task{}, err
		}
		cur, err := atrest.Decode(s.box, []byte(h.body))
		if err != nil {
			return domain.Task{}, err
		}
		next, err := fn(cur)
		if err != nil {
			return domain.Task{}, err
		}
		history := h.history
		keep := false
		switch next.Version {
		case h.latest + 1:
			keep = true
			history = append(history, changeOf(next))
		case h.latest:
			history[len(history)-1] = changeOf(next)
		default:
			return domain.Task{}, fmt.Errorf("update task %s: version %d follows neither replace nor add on version %d", ref, next.Version, h.latest)
		}
		body, err := atrest.Encode(s.box, next)
		if err != nil {
			return domain.Task{}, fmt.Errorf("encode task %s: %w", ref, err)
		}
		hist, err := json.Marshal(history)
		if err != nil {
			return domain.Task{}, fmt.Errorf("encode task %s: %w", ref, err)
		}
		err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
			n, err := tx.ExecAffected(`UPDATE tasks SET latest = ?, status = ?, rev = rev + 1, body = ?, history = ? WHERE id = ? AND rev = ?`,
				next.Version, string(next.Status), string(body), string(hist), h.id, h.rev)
			if err != nil {
				return err
			}
			if n == 0 {
				return errLost
			}
			if keep {
				if _, err := tx.Exec(`INSERT OR REPLACE INTO task_versions (task, version, body) VALUES (?, ?, ?)`, h.id, h.latest, h.body); err != nil {
					return err
				}
			}
			return setLabels(tx, h.id, next.Labels)
		})
		if errors.Is(err, errLost) {
			continue
		}
		if err != nil {
			return domain.Task{}, fmt.Errorf("update task %s: %w", ref, err)
		}
		return next, nil
	}
	return domain.Task{}, apperr.New(apperr.ConcurrentModification, "Task '%s' is being changed by others; try again.", ref.Name)
}

// DeleteTask removes the task and its versions, conditionally on the revision read.
func (s *Store) DeleteTask(ctx context.Context, ref domain.Ref) error {
	for range maxAttempts {
		h, err := s.head(ctx, ref)
		if err != nil {
			return err
		}
		err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
			n, err := tx.ExecAffected(`DELETE FROM tasks WHERE id = ? AND rev = ?`, h.id, h.rev)
			if err == nil && n == 0 {
				return errLost
			}
			return err
		})
		if errors.Is(err, errLost) {
			continue // changed meanwhile: judge the current one
		}
		if err != nil {
			return fmt.Errorf("delete task %s: %w", ref, err)
		}
		return nil
	}
	return apperr.New(apperr.ConcurrentModification, "Task '%s' is being changed by others; try again.", ref.Name)
}

// DeleteTeamTasks removes the tasks of team created before the given time, with their
// versions, in one transaction.
func (s *Store) DeleteTeamTasks(ctx context.Context, team string, before time.Time) (int, error) {
	var n int64
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		var err error
		n, err = tx.ExecAffected(`DELETE FROM tasks WHERE scope = ? AND team = ? AND created < ?`,
			string(domain.ScopeTeam), team, before.UnixMilli())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("delete tasks of team %s: %w", team, err)
	}
	return int(n), nil
}

// listQuery is a page of the latest versions of the tasks where selects, by creation.
func listQuery(where string, desc bool) string {
	dir := " ASC"
	if desc {
		dir = " DESC"
	}
	return "SELECT body FROM tasks" + where + " ORDER BY created" + dir + ", id" + dir + " LIMIT ? OFFSET ?"
}

// FindTasks returns one page of latest versions matching f, ordered by creation date.
func (s *Store) FindTasks(ctx context.Context, f domain.Filter, p page.Request) ([]domain.Task, int64, error) {
	conds := []string{"scope = ?"}
	args := []any{string(f.Scope)}
	in := func(col string, vals []string) {
		if len(vals) == 0 {
			conds = append(conds, "0")
			return
		}
		conds = append(conds, col+" IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ")+")")
		for _, v := range vals {
			args = append(args, v)
		}
	}
	if f.Scope == domain.ScopeTeam {
		in("team", f.Teams)
	} else {
		// Global tasks have no team: said, it lets the index give them in creation order.
		conds = append(conds, "team = ''")
	}
	if len(f.Names) > 0 {
		in("name", f.Names)
	}
	if len(f.Statuses) > 0 {
		statuses := make([]string, len(f.Statuses))
		for i, st := range f.Statuses {
			statuses[i] = string(st)
		}
		in("status", statuses)
	}
	for _, pair := range labelPairs(f.Labels) {
		conds = append(conds, "EXISTS (SELECT 1 FROM task_labels l WHERE l.task = tasks.id AND l.pair = ?)")
		args = append(args, pair)
	}
	where := " WHERE " + strings.Join(conds, " AND ")
	query := listQuery(where, p.Desc)
	var total int64
	if err := s.db.QueryRow(ctx, "SELECT count(*) FROM tasks"+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count tasks: %w", err)
	}
	limit := int64(p.Size)
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.Query(ctx, query, append(args, limit, p.Offset())...)
	if err != nil {
		return nil, 0, fmt.Errorf("find tasks: %w", err)
	}
	defer rows.Close()
	var out []domain.Task
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			return nil, 0, fmt.Errorf("read tasks: %w", err)
		}
		t, err := atrest.Decode(s.box, []byte(body))
		if err != nil {
			return nil, 0, err
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read tasks: %w", err)
	}
	return out, total, nil
}

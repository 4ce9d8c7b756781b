// Package sqlitestore keeps the schedules service's schedules in a SQLite file of its own
// (libs/sqlitex): the store of a single-process Baton (standalone mode), for one schedules
// replica. mongostore keeps the same on MongoDB, and both pass the same contract suite
// (internal/storetest).
//
// One table, schedules, has real columns for what is looked up, filtered, sorted or
// written on a condition — team, workflow, type, status, creation date, version, the due
// time and the claim on it, and what the end of a run looks at (the last run and the fire
// buffered behind it, the recheck time) — and keeps the rest of a schedule as JSON (doc),
// its params sealed as mongostore seals them (internal/atrest).
//
// The scheduler's queries go by index: the schedules due by a horizon whose claims have
// lapsed are a range of the (due, lease_until) index, read from the index alone, claimed and read back in one
// statement; a claim is checked and kept by id. Every write is one conditional statement:
// a save WHERE version = the version read, a claim holder's WHERE claim = its token, zero
// rows changed being domain.ErrConflict. Writes go through the file's one writer, which
// commits those of concurrent callers together (group commit); each is answered once it
// is on disk.
package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/schedules/internal/app"
	"github.com/baton-flow/baton/services/schedules/internal/atrest"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// Store is app.Store and app.Claims on a SQLite database.
type Store struct {
	db  *sqlitex.DB
	box secrets.Sealer
	// own says Close closes db, which Open opened.
	own bool
}

var (
	_ app.Store  = (*Store)(nil)
	_ app.Claims = (*Store)(nil)
)

// Open opens (creating it if need be) the database file at path and brings its schema up
// to date; box seals the params of schedules at rest. Close closes it.
func Open(ctx context.Context, path string, box secrets.Sealer) (*Store, error) {
	s, err := sqlitex.OpenStore(ctx, path, func(db *sqlitex.DB) (*Store, error) { return New(ctx, db, box) })
	if err != nil {
		return nil, err
	}
	s.own = true
	return s, nil
}

// New returns the store over db, its schema brought up to date, and lets go of the claims
// an earlier process left in it.
//
// A file serves one schedules replica: claims found at the start are those of the process
// before, which is gone. Let go, their schedules fire at once rather than when their
// leases lapse (up to a lease after their due times). Were two replicas pointed at one
// file all the same, a fire submitted twice is still one run: its key makes it the same.
func New(ctx context.Context, db *sqlitex.DB, box secrets.Sealer) (*Store, error) {
	if err := db.Migrate(ctx, migrations); err != nil {
		return nil, fmt.Errorf("schedules store: %w", err)
	}
	err := db.Write(ctx, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(qLetGo)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("schedules store: let go of the claims of the process before: %w", err)
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

// Path is the database file's path.
func (s *Store) Path() string { return s.db.Path() }

// migrations are the schema's versions (sqlitex.DB.Migrate); a new version is a new
// entry, never an edit of one released.
//
// Times are nanoseconds since the epoch, NULL for none. due is domain.Schedule.Due, NULL
// when the schedule has nothing to do; claim and lease_until are the claim of the replica
// that holds it, NULL when none does. The columns last_run, buffered and recheck are the
// truth of those fields, which a run's end changes without rewriting the doc.
var migrations = []string{`
CREATE TABLE schedules (
	id          TEXT PRIMARY KEY,
	team        TEXT NOT NULL,
	workflow    TEXT NOT NULL,
	type        TEXT NOT NULL,
	status      TEXT NOT NULL,
	created     INTEGER NOT NULL,
	last_run    TEXT NOT NULL DEFAULT '',
	buffered    INTEGER,
	recheck     INTEGER,
	due         INTEGER,
	claim       TEXT,
	lease_until INTEGER,
	version     INTEGER NOT NULL,
	doc         BLOB NOT NULL
);
CREATE INDEX schedules_team_created ON schedules (team, created, id);
CREATE INDEX schedules_team_workflow ON schedules (team, workflow);
CREATE INDEX schedules_due ON schedules (due, lease_until) WHERE due IS NOT NULL;
`}

// doc is what the doc column holds of a schedule: everything but its columns.
type doc struct {
	Name            string            `json:"name"`
	Description     string            `json:"description,omitempty"`
	TriggerDisabled bool              `json:"triggerDisabled,omitempty"`
	Cron            string            `json:"cron,omitempty"`
	Date            time.Time         `json:"date,omitzero"`
	Timezone        string            `json:"timezone"`
	Params          string            `json:"params,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
	Overlap         string            `json:"overlap"`
	Misfire         string            `json:"misfire"`
	CatchupWindow   time.Duration     `json:"catchupWindow,omitempty"`
	Next            time.Time         `json:"next,omitzero"`
	Last            time.Time         `json:"last,omitzero"`
	Secret          []string          `json:"secret,omitempty"`
	CreatedBy       initiator         `json:"createdBy"`
	Pending         []time.Time       `json:"pending,omitempty"`
}

type initiator struct {
	Type   string `json:"type,omitempty"`
	ID     string `json:"id,omitempty"`
	Name   string `json:"name,omitempty"`
	Person string `json:"person,omitempty"`
}

// row is a schedule as its row holds it.
type row struct {
	id, team, workflow, typ, status, lastRun string
	created, version                         int64
	buffered, recheck                        sql.NullInt64
	doc                                      []byte
}

// columns are a row's columns, in the order row.scan reads them.
const columns = `id, team, workflow, type, status, created, last_run, buffered, recheck, version, doc`

func (r *row) scan(sc interface{ Scan(...any) error }) error {
	return sc.Scan(&r.id, &r.team, &r.workflow, &r.typ, &r.status, &r.created, &r.lastRun, &r.buffered, &r.recheck, &r.version, &r.doc)
}

// values are what a write stores of sch, its params sealed, in the order of the
// statements below: team, workflow, type, status, created, last_run, buffered, recheck,
// due, doc.
func (s *Store) values(sch *domain.Schedule) ([]any, error) {
	params, err := atrest.SealParams(s.box, sch.Params)
	if err != nil {
		return nil, fmt.Errorf("params of schedule %s: %w", sch.ID, err)
	}
	b := sch.CreatedBy
	raw, err := json.Marshal(doc{Name: sch.Name, Description: sch.Description, TriggerDisabled: sch.TriggerDisabled, Cron: sch.Cron,
		Date: sch.Date, Timezone: sch.Timezone, Params: params, Labels: sch.Labels, Overlap: string(sch.Overlap),
		Misfire: string(sch.Misfire), CatchupWindow: sch.CatchupWindow, Next: sch.Next, Last: sch.Last, Secret: sch.Secret,
		CreatedBy: initiator{Type: b.Type, ID: b.ID, Name: b.Name, Person: b.Person}, Pending: sch.Pending})
	if err != nil {
		return nil, fmt.Errorf("encode schedule %s: %w", sch.ID, err)
	}
	return []any{sch.Team, sch.Workflow, string(sch.Type), string(sch.Status), sch.Created.UnixNano(), sch.LastRun,
		nanos(sch.Buffered), nanos(sch.Recheck), nanos(sch.Due()), raw}, nil
}

// schedule answers the schedule r holds, its params opened.
func (s *Store) schedule(r row) (*domain.Schedule, error) {
	var d doc
	if err := json.Unmarshal(r.doc, &d); err != nil {
		return nil, fmt.Errorf("decode schedule %s: %w", r.id, err)
	}
	params, err := atrest.OpenParams(s.box, d.Params)
	if err != nil {
		return nil, fmt.Errorf("params of schedule %s: %w", r.id, err)
	}
	var pending []time.Time
	for _, t := range d.Pending {
		pending = append(pending, t.UTC())
	}
	b := d.CreatedBy
	return &domain.Schedule{ID: r.id, Team: r.team, Name: d.Name, Description: d.Description, Workflow: r.workflow,
		Type: domain.Type(r.typ), Status: domain.Status(r.status), TriggerDisabled: d.TriggerDisabled, Cron: d.Cron,
		Date: utc(d.Date), Timezone: d.Timezone, Params: params, Labels: d.Labels, Overlap: domain.OverlapPolicy(d.Overlap),
		Misfire: domain.MisfirePolicy(d.Misfire), CatchupWindow: d.CatchupWindow, Next: utc(d.Next), Last: utc(d.Last),
		Secret: d.Secret, CreatedBy: domain.Initiator{Type: b.Type, ID: b.ID, Name: b.Name, Person: b.Person},
		LastRun: r.lastRun, Pending: pending, Buffered: fromNanos(r.buffered), Recheck: fromNanos(r.recheck),
		Created: time.Unix(0, r.created).UTC(), Version: r.version}, nil
}

// The statements of the store; those of the hot paths are checked by index in plan_test.go.
const (
	qInsert = `INSERT INTO schedules (id, team, workflow, type, status, created, last_run, buffered, recheck, due, doc, version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qFind = `SELECT ` + columns + ` FROM schedules WHERE id = ?`
	// qSave and qKeep set team … doc, version, claim and lease_until; qSave WHERE the
	// version read (letting any claim go), qKeep WHERE the claim's token.
	qSet = `UPDATE schedules SET team = ?, workflow = ?, type = ?, status = ?, created = ?, last_run = ?, buffered = ?,
		recheck = ?, due = ?, doc = ?, version = ?, claim = ?, lease_until = ?`
	qSave  = qSet + ` WHERE id = ? AND version = ?`
	qKeep  = qSet + ` WHERE id = ? AND claim = ?`
	qHolds = `SELECT 1 FROM schedules WHERE id = ? AND claim = ?`
	// qClaim claims the schedules due by a horizon whose claims lapsed, earliest first, and
	// answers them: one statement, so that two claimers never get the same schedule.
	qClaim = `UPDATE schedules SET claim = ?, lease_until = ?
		WHERE rowid IN (SELECT rowid FROM schedules WHERE due IS NOT NULL AND due <= ? AND (lease_until IS NULL OR lease_until < ?)
			ORDER BY due LIMIT ?)
		RETURNING ` + columns + `, due`
	qNudge = `UPDATE schedules SET recheck = ?, due = ? WHERE id = ? AND last_run = ? AND buffered IS NOT NULL`
	// qDue is the lookup inside qClaim, on its own: whether any schedule is due and free.
	qDue        = `SELECT rowid FROM schedules WHERE due IS NOT NULL AND due <= ? AND (lease_until IS NULL OR lease_until < ?) ORDER BY due LIMIT ?`
	qWorkflow   = `SELECT ` + columns + ` FROM schedules WHERE team = ? AND workflow = ?`
	qDeleteTeam = `DELETE FROM schedules WHERE team = ?`
	// qLetGo lets go of every claim, once, at the start: not a path of the scheduler's.
	qLetGo = `UPDATE schedules SET claim = NULL, lease_until = NULL WHERE claim IS NOT NULL`
)

// CreateSchedule stores a new schedule at version 1.
func (s *Store) CreateSchedule(ctx context.Context, sch *domain.Schedule) error {
	vals, err := s.values(sch)
	if err != nil {
		return err
	}
	args := append(append([]any{sch.ID}, vals...), int64(1))
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(qInsert, args...)
		return err
	})
	if sqlitex.IsUnique(err) {
		return fmt.Errorf("create schedule %s: %w", sch.ID, domain.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("create schedule %s: %w", sch.ID, err)
	}
	sch.Version = 1
	return nil
}

// FindSchedule reads one of team's schedules; SCHEDULE_NOT_FOUND when there is none.
func (s *Store) FindSchedule(ctx context.Context, team, id string) (*domain.Schedule, error) {
	var r row
	err := r.scan(s.db.QueryRow(ctx, qFind, id))
	if errors.Is(err, sql.ErrNoRows) || err == nil && r.team != team {
		return nil, apperr.New(apperr.ScheduleNotFound, "Schedule '%s' was not found.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read schedule %s: %w", id, err)
	}
	return s.schedule(r)
}

// SaveSchedule stores sch on the version it was read at, letting any claim of it go.
func (s *Store) SaveSchedule(ctx context.Context, sch *domain.Schedule) error {
	return s.update(ctx, sch, qSave, nil, nil, sch.Version, "save")
}

// Keep stores sch as token's claim holder, keeping the claim until until (let go when
// zero).
func (s *Store) Keep(ctx context.Context, sch *domain.Schedule, token string, until time.Time) error {
	var claim any
	if !until.IsZero() {
		claim = token
	}
	return s.update(ctx, sch, qKeep, claim, nanos(until), token, "store")
}

// update writes sch by query, on cond (its version or its claim's token), with the claim
// given, and moves sch.Version; domain.ErrConflict when cond no longer holds.
func (s *Store) update(ctx context.Context, sch *domain.Schedule, query string, claim, until, cond any, verb string) error {
	vals, err := s.values(sch)
	if err != nil {
		return err
	}
	version := sch.Version + 1
	args := append(vals, version, claim, until, sch.ID, cond)
	var n int64
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		var err error
		n, err = tx.ExecAffected(query, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("%s schedule %s: %w", verb, sch.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("%s schedule %s: %w", verb, sch.ID, domain.ErrConflict)
	}
	sch.Version = version
	return nil
}

// FindSchedules answers one page of the schedules f selects, oldest first, and how many
// it selects in all.
func (s *Store) FindSchedules(ctx context.Context, f app.Filter, r page.Request) ([]*domain.Schedule, int64, error) {
	count, args := countQuery(f)
	var total int64
	if err := s.db.QueryRow(ctx, count, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count schedules: %w", err)
	}
	if total == 0 {
		return []*domain.Schedule{}, total, nil
	}
	query, args := searchQuery(f, r)
	out, err := s.list(ctx, query, args...)
	return out, total, err
}

// filter is the WHERE clause of the schedules f selects.
func filter(f app.Filter) where {
	w := where{}
	w.add("team = ?", f.Team)
	w.in("id", f.IDs)
	w.in("status", texts(f.Statuses))
	w.in("type", texts(f.Types))
	w.in("workflow", f.Workflows)
	return w
}

// countQuery counts the schedules f selects.
func countQuery(f app.Filter) (string, []any) {
	w := filter(f)
	return `SELECT count(*) FROM schedules` + w.String(), w.args
}

// searchQuery reads page r of the schedules f selects, oldest first.
func searchQuery(f app.Filter, r page.Request) (string, []any) {
	w := filter(f)
	limit := r.Size
	if limit <= 0 {
		limit = -1 // no bound, as a page of no size is to MongoDB
	}
	return `SELECT ` + columns + ` FROM schedules` + w.String() + ` ORDER BY created, id LIMIT ? OFFSET ?`, append(w.args, limit, r.Offset())
}

// FindWorkflowSchedules answers every schedule of team's workflow, archived ones too.
func (s *Store) FindWorkflowSchedules(ctx context.Context, team, workflow string) ([]*domain.Schedule, error) {
	return s.list(ctx, qWorkflow, team, workflow)
}

// list reads the schedules a query of columns answers.
func (s *Store) list(ctx context.Context, query string, args ...any) ([]*domain.Schedule, error) {
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read schedules: %w", err)
	}
	defer rows.Close()
	out := []*domain.Schedule{}
	for rows.Next() {
		var r row
		if err := r.scan(rows); err != nil {
			return nil, fmt.Errorf("read schedules: %w", err)
		}
		sch, err := s.schedule(r)
		if err != nil {
			return nil, err
		}
		out = append(out, sch)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schedules: %w", err)
	}
	return out, nil
}

// NudgeBuffered makes schedule id due at now when it keeps a buffered fire behind run.
func (s *Store) NudgeBuffered(ctx context.Context, id, run string, now time.Time) (bool, error) {
	var n int64
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		var err error
		n, err = tx.ExecAffected(qNudge, now.UnixNano(), now.UnixNano(), id, run)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("nudge schedule %s: %w", id, err)
	}
	return n > 0, nil
}

// DeleteTeamSchedules removes a team's schedules.
func (s *Store) DeleteTeamSchedules(ctx context.Context, team string) error {
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(qDeleteTeam, team)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete the schedules of %s: %w", team, err)
	}
	return nil
}

// ClaimDue claims for token, until until, at most limit schedules due by horizon whose
// claims have lapsed at now, and answers them as stored, earliest due first.
func (s *Store) ClaimDue(ctx context.Context, token string, horizon, now, until time.Time, limit int) ([]*domain.Schedule, error) {
	type claimed struct {
		r   row
		due int64
	}
	// Most polls find nothing due: a read on the index answers them, with no write.
	var rowid int64
	switch err := s.db.QueryRow(ctx, qDue, horizon.UnixNano(), now.UnixNano(), 1).Scan(&rowid); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the schedules due: %w", err)
	}
	var got []claimed
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		got = got[:0]
		rows, err := tx.Query(qClaim, token, until.UnixNano(), horizon.UnixNano(), now.UnixNano(), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c claimed
			r := &c.r
			if err := rows.Scan(&r.id, &r.team, &r.workflow, &r.typ, &r.status, &r.created, &r.lastRun, &r.buffered, &r.recheck,
				&r.version, &r.doc, &c.due); err != nil {
				return err
			}
			got = append(got, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("claim the schedules due: %w", err)
	}
	// Decoded and opened here, not on the writer, which the other writes wait on.
	slices.SortFunc(got, func(a, b claimed) int { return cmp.Or(cmp.Compare(a.due, b.due), strings.Compare(a.r.id, b.r.id)) })
	out := make([]*domain.Schedule, 0, len(got))
	for _, c := range got {
		sch, err := s.schedule(c.r)
		if err != nil {
			return nil, err
		}
		out = append(out, sch)
	}
	return out, nil
}

// Holds reports whether token still holds its claim of schedule id.
func (s *Store) Holds(ctx context.Context, id, token string) (bool, error) {
	var one int
	err := s.db.QueryRow(ctx, qHolds, id, token).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the claim of schedule %s: %w", id, err)
	}
	return true, nil
}

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

// utc answers t in UTC, zero kept zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// texts answers values as plain strings.
func texts[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// where builds the WHERE clause of a search; every value is a bound argument.
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
	if len(vals) == 0 {
		return
	}
	args := make([]any, len(vals))
	for i, v := range vals {
		args[i] = v
	}
	w.add(column+" IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ")+")", args...)
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

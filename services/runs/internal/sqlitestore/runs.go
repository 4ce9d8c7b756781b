package sqlitestore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/runs/internal/atrest"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Statements of the hot paths, named for the test that checks each goes by an index.
const (
	qFindRun    = `SELECT ` + runColumns + ` FROM runs WHERE id = ?`
	qTaskRuns   = `SELECT version, doc FROM task_runs WHERE run = ? ORDER BY idx`
	qTaskRun    = `SELECT version, doc FROM task_runs WHERE run = ? AND idx = ?`
	qSaveTask   = `UPDATE task_runs SET doc = ?, version = version + 1 WHERE run = ? AND idx = ? AND version = ?`
	qRunVersion = `SELECT version FROM runs WHERE id = ? AND live = 1`
	qSaveRun    = `UPDATE runs SET status = ?, phase = ?, start_at = ?, end_at = ?, owner = ?, queued = ?,
			wake_at = ?, version = version + 1, doc = ? WHERE id = ? AND live = 1 AND version = ?`
	qDefinition = `SELECT doc FROM definitions WHERE id = ?`
)

// runDoc is r as its doc: without its definition (stored apart, shared), what came from a
// secret sealed.
func (s *Store) runDoc(r *domain.Run) ([]byte, error) {
	c := *r
	c.Definition = nil
	c.Params = atrest.SealValues(s.box, r.Params, r.SecretParams)
	c.Results = atrest.SealValues(s.box, r.Results, r.SecretResults)
	c.Context = atrest.SealContext(s.box, r.Context)
	return encode(&c)
}

// runRow is what a run's row answers.
type runRow struct {
	owner   sql.NullString
	queued  bool
	phase   string
	version int64
	doc     []byte
}

// runColumns are read into a runRow by scan.
const runColumns = `owner, queued, phase, version, doc`

func (row *runRow) scan(sc interface{ Scan(...any) error }) error {
	return sc.Scan(&row.owner, &row.queued, &row.phase, &row.version, &row.doc)
}

// run decodes a row: the doc, with the columns that are the truth over it.
func (s *Store) run(row *runRow) (*domain.Run, error) {
	var r domain.Run
	if err := decode(row.doc, &r); err != nil {
		return nil, err
	}
	r.Params = atrest.OpenValues(s.box, r.Params, r.SecretParams)
	r.Results = atrest.OpenValues(s.box, r.Results, r.SecretResults)
	r.Context = atrest.OpenContext(s.box, r.Context)
	r.Owner, r.Queued, r.Phase, r.Version = row.owner.String, row.queued, domain.Phase(row.phase), row.version
	return &r, nil
}

// taskDoc is t as its doc, what came from a secret sealed.
func (s *Store) taskDoc(t *domain.TaskRun) ([]byte, error) {
	c := *t
	c.Params = atrest.SealValues(s.box, t.Params, t.SecretParams)
	c.Results = atrest.SealTexts(s.box, t.Results, t.SecretResults)
	if t.SecretDecision() {
		c.Decision = atrest.Seal(s.box, t.Decision)
	}
	return encode(&c)
}

// task decodes a task run's doc at its version.
func (s *Store) task(doc []byte, version int64) (*domain.TaskRun, error) {
	var t domain.TaskRun
	if err := decode(doc, &t); err != nil {
		return nil, err
	}
	t.Params = atrest.OpenValues(s.box, t.Params, t.SecretParams)
	t.Results = atrest.OpenTexts(s.box, t.Results, t.SecretResults)
	t.Decision = atrest.Open(s.box, t.Decision)
	t.Version = version
	return &t, nil
}

// definition answers the id r's definition is stored under and its doc: a definition
// holding secrets is the run's own ("run:<id>"; a sealed value differs at every seal, and a
// digest of the clear text would let its secrets be guessed), any other is shared by the
// runs of its workflow version, named by its content's digest.
func (s *Store) definition(r *domain.Run) (string, []byte, error) {
	def := atrest.WithoutSecrets(r.Definition)
	if sealed, ok := atrest.SealTaskSecrets(s.box, def); ok {
		doc, err := encode(sealed)
		return "run:" + r.ID, doc, err
	}
	doc, err := encode(def)
	if err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(doc)
	return "sha256:" + hex.EncodeToString(sum[:]), doc, nil
}

// liveFlag is the live column for a run: 1 in flight, 0 put away.
func liveFlag(r *domain.Run) int {
	if r.Phase.Ended() && r.Owner == "" {
		return 0
	}
	return 1
}

// owedAt is when a run put away that owes events last sent them: at its end.
func owedAt(r *domain.Run) any {
	if r.Owner != "" || len(r.Owed) == 0 {
		return nil
	}
	return r.EndTime.UnixNano()
}

// encodedRun is a run with its task runs, encoded outside the writer.
type encodedRun struct {
	run   []byte
	tasks [][]byte
	defID string
	def   []byte
}

func (s *Store) encodeRun(r *domain.Run, tasks []*domain.TaskRun, changed []int, all bool) (encodedRun, error) {
	var e encodedRun
	var err error
	if e.run, err = s.runDoc(r); err != nil {
		return e, err
	}
	e.tasks = make([][]byte, len(tasks))
	for i, t := range tasks {
		if !all && !slices.Contains(changed, i) {
			continue
		}
		if e.tasks[i], err = s.taskDoc(t); err != nil {
			return e, err
		}
	}
	return e, nil
}

// CreateRun stores a new run with its task runs and definition: in flight, or straight in
// the archive when it ended within its first step; domain.ErrConflict when it exists.
func (s *Store) CreateRun(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun) error {
	if r.Phase.Ended() {
		r.Owner, r.Queued = "", false
	}
	defID, def, err := s.definition(r)
	if err != nil {
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	r.DefinitionID = defID
	e, err := s.encodeRun(r, tasks, nil, true)
	if err != nil {
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		if _, err := tx.Exec(`INSERT INTO definitions (id, doc) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`, defID, def); err != nil {
			return err
		}
		if err := insertRun(tx, r, e.run); err != nil {
			return err
		}
		for i, t := range tasks {
			if _, err := tx.Exec(`INSERT INTO task_runs (run, idx, version, doc) VALUES (?, ?, ?, ?)`, r.ID, i, t.Version, e.tasks[i]); err != nil {
				return err
			}
		}
		for k, v := range r.Labels {
			if _, err := tx.Exec(`INSERT INTO run_labels (label, run) VALUES (?, ?)`, k+"="+v, r.ID); err != nil {
				return err
			}
		}
		for _, a := range r.Ancestors {
			if _, err := tx.Exec(`INSERT INTO run_ancestors (ancestor, run) VALUES (?, ?) ON CONFLICT DO NOTHING`, a, r.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if sqlitex.IsUnique(err) {
		return fmt.Errorf("create run %s: %w", r.ID, domain.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	return nil
}

// insertRun inserts r's row.
func insertRun(tx *sqlitex.Tx, r *domain.Run, doc []byte) error {
	ancestors, err := encode(r.Ancestors)
	if err != nil {
		return err
	}
	_, err = tx.Exec(`INSERT INTO runs (id, live, team, workflow, status, phase, trigger_by, created, start_at, end_at,
		owner, queued, wake_at, depth, ancestors, owed_at, definition_id, version, doc)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, liveFlag(r), r.Team, r.Workflow, string(r.Status), string(r.Phase), r.Trigger, r.CreationDate.UnixNano(),
		nanos(r.StartTime), nanos(r.EndTime), nullString(r.Owner), r.Queued, nanos(r.WakeAt), r.Depth, ancestors,
		owedAt(r), r.DefinitionID, r.Version, doc)
	return err
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// FindRun reads a run, without its definition.
func (s *Store) FindRun(ctx context.Context, id string) (*domain.Run, error) {
	var row runRow
	err := row.scan(s.db.QueryRow(ctx, qFindRun, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, runNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("find run %s: %w", id, err)
	}
	return s.run(&row)
}

// FindDefinition reads the workflow version r runs.
func (s *Store) FindDefinition(ctx context.Context, r *domain.Run) (*domain.Definition, error) {
	var doc []byte
	if err := s.db.QueryRow(ctx, qDefinition, cmp.Or(r.DefinitionID, "run:"+r.ID)).Scan(&doc); err != nil {
		return nil, fmt.Errorf("definition of run %s: %w", r.ID, err)
	}
	var def domain.Definition
	if err := decode(doc, &def); err != nil {
		return nil, fmt.Errorf("definition of run %s: %w", r.ID, err)
	}
	atrest.OpenTaskSecrets(s.box, &def)
	return &def, nil
}

// FindTaskRuns reads the task runs of r, in definition order.
func (s *Store) FindTaskRuns(ctx context.Context, r *domain.Run) ([]*domain.TaskRun, error) {
	rows, err := s.db.Query(ctx, qTaskRuns, r.ID)
	if err != nil {
		return nil, fmt.Errorf("task runs of %s: %w", r.ID, err)
	}
	defer rows.Close()
	out := make([]*domain.TaskRun, 0, r.Tasks)
	for rows.Next() {
		var version int64
		var doc []byte
		if err := rows.Scan(&version, &doc); err != nil {
			return nil, fmt.Errorf("task runs of %s: %w", r.ID, err)
		}
		t, err := s.task(doc, version)
		if err != nil {
			return nil, fmt.Errorf("task runs of %s: %w", r.ID, err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("task runs of %s: %w", r.ID, err)
	}
	if len(out) == 0 && r.Tasks > 0 {
		return nil, runNotFound(r.ID)
	}
	return out, nil
}

// FindTaskRun reads one task run; TaskRunNotFound when there is none.
func (s *Store) FindTaskRun(ctx context.Context, id string) (*domain.TaskRun, error) {
	run, i, ok := domain.ParseTaskRunID(id)
	if !ok {
		return nil, apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", id)
	}
	var version int64
	var doc []byte
	err := s.db.QueryRow(ctx, qTaskRun, run, i).Scan(&version, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("find task run %s: %w", id, err)
	}
	return s.task(doc, version)
}

// SaveStep stores the changed task runs, each on the version it was read at, and the run
// on its version; all or nothing. The versions move in memory once stored.
func (s *Store) SaveStep(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun, changed []int) error {
	return s.save(ctx, r, tasks, changed, true)
}

// SaveTasks stores the changed task runs, each on its version, provided the run is still
// at its version, which stays; all or nothing.
func (s *Store) SaveTasks(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun, changed []int) error {
	return s.save(ctx, r, tasks, changed, false)
}

func (s *Store) save(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun, changed []int, withRun bool) error {
	for _, i := range changed {
		if i < 0 || i >= len(tasks) {
			return fmt.Errorf("save run %s: task run %d of %d", r.ID, i, len(tasks))
		}
	}
	e, err := s.encodeRun(r, tasks, changed, false)
	if err != nil {
		return fmt.Errorf("save run %s: %w", r.ID, err)
	}
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		for _, i := range changed {
			n, err := tx.ExecAffected(qSaveTask,
				e.tasks[i], r.ID, i, tasks[i].Version)
			if err != nil {
				return err
			}
			if n != 1 {
				return fmt.Errorf("save task runs of %s: %w", r.ID, domain.ErrConflict)
			}
		}
		if !withRun {
			var version int64
			err := tx.QueryRow(qRunVersion, r.ID).Scan(&version)
			if errors.Is(err, sql.ErrNoRows) || (err == nil && version != r.Version) {
				return fmt.Errorf("save run %s: %w", r.ID, domain.ErrConflict)
			}
			return err
		}
		n, err := tx.ExecAffected(qSaveRun,
			string(r.Status), string(r.Phase), nanos(r.StartTime), nanos(r.EndTime), nullString(r.Owner), r.Queued,
			nanos(r.WakeAt), e.run, r.ID, r.Version)
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("save run %s: %w", r.ID, domain.ErrConflict)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, domain.ErrConflict) {
			return err
		}
		return fmt.Errorf("save run %s: %w", r.ID, err)
	}
	for _, i := range changed {
		tasks[i].Version++
	}
	if withRun {
		r.Version++
	}
	return nil
}

// Archive puts away a run that ended: its row and task runs as r and tasks are, no owner,
// not queued, and owing from its end the events it still owes. A run put away already is
// left as it is.
func (s *Store) Archive(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun) error {
	c := *r
	c.Owner, c.Queued = "", false
	e, err := s.encodeRun(&c, tasks, nil, true)
	if err != nil {
		return fmt.Errorf("archive run %s: %w", r.ID, err)
	}
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		var live bool
		err := tx.QueryRow(`SELECT live FROM runs WHERE id = ?`, r.ID).Scan(&live)
		if errors.Is(err, sql.ErrNoRows) {
			return runNotFound(r.ID)
		}
		if err != nil || !live {
			return err
		}
		if _, err := tx.Exec(`UPDATE runs SET live = 0, status = ?, phase = ?, start_at = ?, end_at = ?, owner = NULL,
			queued = 0, wake_at = NULL, owed_at = ?, version = version + 1, doc = ? WHERE id = ?`,
			string(c.Status), string(c.Phase), nanos(c.StartTime), nanos(c.EndTime), owedAt(&c), e.run, r.ID); err != nil {
			return err
		}
		for i := range tasks {
			if _, err := tx.Exec(`UPDATE task_runs SET doc = ?, version = version + 1 WHERE run = ? AND idx = ?`, e.tasks[i], r.ID, i); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("archive run %s: %w", r.ID, err)
	}
	return nil
}

// FinalizeArchived moves a run put away from completed to finalized; false when it is not
// completed.
func (s *Store) FinalizeArchived(ctx context.Context, id string) (bool, error) {
	var n int64
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		var err error
		n, err = tx.ExecAffected(`UPDATE runs SET phase = ?, version = version + 1 WHERE id = ? AND live = 0 AND phase = ?`,
			string(domain.Finalized), id, string(domain.Completed))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("finalize run %s: %w", id, err)
	}
	return n == 1, nil
}

// inFlightQuery is the query of the runs in flight f selects.
func inFlightQuery(f domain.InFlightFilter) (string, []any) {
	w := where{}
	w.add("live = 1")
	if len(f.Owners) > 0 {
		w.in("owner", f.Owners)
	}
	if f.Team != "" {
		w.add("team = ?", f.Team)
	}
	if f.Queued {
		w.add("queued = 1")
	}
	from := "runs"
	if f.Children {
		w.add("depth > 0")
		if len(f.Owners) > 0 {
			// Without statistics the planner takes (owner, wake_at), which reads every run
			// of the replica's to find its few children.
			from = "runs INDEXED BY runs_owner_children"
		}
	}
	if !f.WakeBefore.IsZero() {
		w.add("wake_at < ?", f.WakeBefore.UnixNano())
	}
	return `SELECT id, team, owner, created, queued, phase, ancestors, wake_at FROM ` + from + w.String(), w.args
}

// ListInFlight lists the runs in flight f selects.
func (s *Store) ListInFlight(ctx context.Context, f domain.InFlightFilter) ([]domain.InFlight, error) {
	query, args := inFlightQuery(f)
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs in flight: %w", err)
	}
	defer rows.Close()
	var out []domain.InFlight
	for rows.Next() {
		var r domain.InFlight
		var owner sql.NullString
		var created int64
		var ancestors []byte
		var wake sql.NullInt64
		if err := rows.Scan(&r.ID, &r.Team, &owner, &created, &r.Queued, &r.Phase, &ancestors, &wake); err != nil {
			return nil, fmt.Errorf("list runs in flight: %w", err)
		}
		if err := decode(ancestors, &r.Ancestors); err != nil {
			return nil, err
		}
		r.Owner, r.Created, r.WakeAt = owner.String, time.Unix(0, created).UTC(), fromNanos(wake)
		out = append(out, r)
	}
	return out, rows.Err()
}

// SetQueued marks whether a run in flight waits for a slot, moving its version.
func (s *Store) SetQueued(ctx context.Context, id string, queued bool) error {
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`UPDATE runs SET queued = ?, version = version + 1 WHERE id = ? AND live = 1`, queued, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("set run %s queued: %w", id, err)
	}
	return nil
}

// TakeOver moves a run in flight from replica from to owner; false when it is not from's.
func (s *Store) TakeOver(ctx context.Context, id, from, owner string) (bool, error) {
	var n int64
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		var err error
		n, err = tx.ExecAffected(`UPDATE runs SET owner = ?, version = version + 1 WHERE id = ? AND live = 1 AND owner = ?`, owner, id, from)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("take over run %s: %w", id, err)
	}
	return n == 1, nil
}

// stringsOf reads one text column of every row.
func (s *Store) stringsOf(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// FindDescendants lists the runs in flight, not completed, below run id.
func (s *Store) FindDescendants(ctx context.Context, id string) ([]string, error) {
	out, err := s.stringsOf(ctx, `SELECT r.id FROM run_ancestors a JOIN runs r ON r.id = a.run
		WHERE a.ancestor = ? AND r.live = 1 AND r.phase NOT IN (?, ?) ORDER BY r.id`,
		id, string(domain.Completed), string(domain.Finalized))
	if err != nil {
		return nil, fmt.Errorf("runs below %s: %w", id, err)
	}
	return out, nil
}

// CountDescendants counts the runs below run id, in flight or ended.
func (s *Store) CountDescendants(ctx context.Context, id string) (int64, error) {
	var n int64
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM run_ancestors WHERE ancestor = ?`, id).Scan(&n); err != nil {
		return 0, fmt.Errorf("count runs below %s: %w", id, err)
	}
	return n, nil
}

// FindStopped answers which of ids ended cancelled or timed out.
func (s *Store) FindStopped(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	args := append(anys(ids), string(domain.Completed), string(domain.Finalized), string(domain.Cancelled), string(domain.TimedOut))
	stopped, err := s.stringsOf(ctx, `SELECT id FROM runs WHERE id IN (`+placeholders(len(ids))+`)
		AND phase IN (?, ?) AND status IN (?, ?)`, args...)
	if err != nil {
		return nil, fmt.Errorf("find runs stopped: %w", err)
	}
	for _, id := range stopped {
		out[id] = true
	}
	return out, nil
}

// FindUnfinished lists the ids of team's runs not completed, of workflow unless it is
// empty.
func (s *Store) FindUnfinished(ctx context.Context, team, workflow string) ([]string, error) {
	w := where{}
	w.add("live = 1")
	w.add("team = ?", team)
	if workflow != "" {
		w.add("workflow = ?", workflow)
	}
	w.add("phase NOT IN (?, ?)", string(domain.Completed), string(domain.Finalized))
	out, err := s.stringsOf(ctx, `SELECT id FROM runs`+w.String()+` ORDER BY id`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("unfinished runs of %s: %w", team, err)
	}
	return out, nil
}

// HasLiveRuns reports whether a run of team is in flight or not yet put away.
func (s *Store) HasLiveRuns(ctx context.Context, team string) (bool, error) {
	var one int
	err := s.db.QueryRow(ctx, `SELECT 1 FROM runs WHERE live = 1 AND team = ? LIMIT 1`, team).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("live runs of %s: %w", team, err)
	}
	return true, nil
}

// DeleteTeamRuns removes what team's runs that ended left: runs, task runs, labels, logs,
// heartbeats, and definitions of their own.
func (s *Store) DeleteTeamRuns(ctx context.Context, team string) error {
	ids, err := s.stringsOf(ctx, `SELECT id FROM runs WHERE team = ? AND live = 0`, team)
	if err != nil {
		return fmt.Errorf("runs of %s: %w", team, err)
	}
	// A few hundred runs a write, so that others' writes go on meanwhile.
	for chunk := range slices.Chunk(ids, 200) {
		err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
			for _, id := range chunk {
				for _, q := range []string{
					`DELETE FROM logs WHERE task_run > ? AND task_run < ?`,
					`DELETE FROM heartbeats WHERE task_run > ? AND task_run < ?`,
				} {
					// Task run ids are "<run>.<index>": '/' follows '.'.
					if _, err := tx.Exec(q, id+".", id+"/"); err != nil {
						return err
					}
				}
				for _, q := range []string{
					`DELETE FROM task_runs WHERE run = ?`,
					`DELETE FROM run_labels WHERE run = ?`,
					`DELETE FROM run_ancestors WHERE run = ?`,
					`DELETE FROM runs WHERE id = ? AND live = 0`,
				} {
					if _, err := tx.Exec(q, id); err != nil {
						return err
					}
				}
				if _, err := tx.Exec(`DELETE FROM definitions WHERE id = ?`, "run:"+id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("delete runs of %s: %w", team, err)
		}
	}
	return nil
}

// runFilter is the WHERE clause of the runs f selects; false when it selects none.
func runFilter(f domain.RunFilter) (where, bool) {
	w := where{}
	if f.None {
		return w, false
	}
	w.add("team = ?", f.Team)
	w.in("status", f.Statuses)
	w.in("phase", f.Phases)
	w.in("id", f.IDs)
	if len(f.Exclude) > 0 {
		w.add("id NOT IN ("+placeholders(len(f.Exclude))+")", anys(f.Exclude)...)
	}
	w.in("workflow", f.Workflows)
	w.in("trigger_by", f.Triggers)
	if f.From != nil {
		w.add("created >= ?", f.From.UnixNano())
	}
	if f.To != nil {
		w.add("created <= ?", f.To.UnixNano())
	}
	labels := make([]string, 0, len(f.Labels))
	for k, v := range f.Labels {
		labels = append(labels, k+"="+v)
	}
	sort.Strings(labels)
	for _, l := range labels {
		w.add("id IN (SELECT run FROM run_labels WHERE label = ?)", l)
	}
	return w, true
}

// FindRuns answers one page of the runs f selects, in flight and ended together, by
// creation date, and how many it selects in all.
func (s *Store) FindRuns(ctx context.Context, f domain.RunFilter, p page.Request) ([]*domain.Run, int64, error) {
	w, any := runFilter(f)
	if !any {
		return []*domain.Run{}, 0, nil
	}
	var total int64
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM runs`+w.String(), w.args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count runs: %w", err)
	}
	order := ` ORDER BY created, id`
	if p.Desc {
		order = ` ORDER BY created DESC, id DESC`
	}
	rows, err := s.db.Query(ctx, `SELECT `+runColumns+` FROM runs`+w.String()+order+` LIMIT ? OFFSET ?`,
		append(w.args, p.Size, p.Offset())...)
	if err != nil {
		return nil, 0, fmt.Errorf("find runs: %w", err)
	}
	defer rows.Close()
	out := []*domain.Run{}
	for rows.Next() {
		var row runRow
		if err := row.scan(rows); err != nil {
			return nil, 0, fmt.Errorf("find runs: %w", err)
		}
		r, err := s.run(&row)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r)
	}
	return out, total, rows.Err()
}

// CountRuns counts the runs f selects by status.
func (s *Store) CountRuns(ctx context.Context, f domain.RunFilter) (map[string]int64, error) {
	out := map[string]int64{}
	w, any := runFilter(f)
	if !any {
		return out, nil
	}
	rows, err := s.db.Query(ctx, `SELECT status, count(*) FROM runs`+w.String()+` GROUP BY status`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var status string
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			return nil, fmt.Errorf("count runs: %w", err)
		}
		out[status] = n
	}
	return out, rows.Err()
}

// Insight aggregates the runs f selects as of now, listing the newest maxRuns of them. It
// reads columns only, never a run's doc.
func (s *Store) Insight(ctx context.Context, f domain.RunFilter, now time.Time, maxRuns int) (domain.Insight, error) {
	var in domain.Insight
	w, any := runFilter(f)
	if !any {
		return in, nil
	}
	rows, err := s.db.Query(ctx, `SELECT id, workflow, status, phase, created, start_at, end_at FROM runs`+w.String()+
		` ORDER BY created DESC, id DESC`, w.args...)
	if err != nil {
		return in, fmt.Errorf("insight: %w", err)
	}
	defer rows.Close()
	var durations []int64
	for rows.Next() {
		var r domain.Run
		var created int64
		var start, end sql.NullInt64
		if err := rows.Scan(&r.ID, &r.Workflow, &r.Status, &r.Phase, &created, &start, &end); err != nil {
			return in, fmt.Errorf("insight: %w", err)
		}
		r.CreationDate, r.StartTime, r.EndTime = time.Unix(0, created).UTC(), fromNanos(start), fromNanos(end)
		d := r.Duration(now)
		durations = append(durations, d)
		in.Total++
		in.TotalDuration += d
		if r.Phase == domain.PhaseRunning {
			in.Running++
		}
		if len(in.Runs) < maxRuns {
			in.Runs = append(in.Runs, domain.RunSummary{ID: r.ID, Workflow: r.Workflow, Status: r.Status,
				CreationDate: r.CreationDate, Duration: d})
		}
	}
	if err := rows.Err(); err != nil {
		return in, fmt.Errorf("insight: %w", err)
	}
	if n := len(durations); n > 0 {
		slices.Sort(durations)
		a, b := durations[(n-1)/2], durations[n/2]
		in.MedianDuration = a + (b-a)/2
	}
	return in, nil
}

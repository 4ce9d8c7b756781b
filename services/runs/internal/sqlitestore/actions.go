package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/runs/internal/atrest"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

func actionNotFound(id string) error {
	return apperr.New(apperr.ActionNotFound, "Action '%s' was not found.", id)
}

// actionDoc is a as its doc: the form's password parameters and the values named secret
// sealed.
func (s *Store) actionDoc(a *domain.Action) ([]byte, error) {
	c := *a
	c.Values = atrest.SealValues(s.box, a.Values, a.SecretValues)
	if len(a.Form) > 0 {
		c.Form = atrest.SealForm(s.box, a.Form)
	}
	return encode(&c)
}

// action decodes an action's doc at its version.
func (s *Store) action(doc []byte, version int64) (*domain.Action, error) {
	var a domain.Action
	if err := decode(doc, &a); err != nil {
		return nil, err
	}
	a.Values = atrest.OpenValues(s.box, a.Values, a.SecretValues)
	if len(a.Form) > 0 {
		a.Form = atrest.OpenForm(s.box, a.Form)
	}
	a.Version = version
	return &a, nil
}

// unapplied reports whether a is decided with its decision perhaps not taken by its run.
func unapplied(a *domain.Action) bool { return !a.Status.Open() && !a.Applied }

// CreateAction stores a new action; one stored with its id already is kept as it is.
func (s *Store) CreateAction(ctx context.Context, a *domain.Action) error {
	doc, err := s.actionDoc(a)
	if err != nil {
		return fmt.Errorf("create action %s: %w", a.ID, err)
	}
	return s.write(ctx, "create action "+a.ID, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`INSERT INTO actions (id, team, type, status, workflow, workflow_name, run_id, created, decided_at,
			unapplied, version, doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			a.ID, a.Team, string(a.Type), string(a.Status), a.Workflow, a.WorkflowName, a.RunID, a.CreationDate.UnixNano(),
			nanos(a.DecidedAt), unapplied(a), a.Version, doc)
		return err
	})
}

// FindAction reads one action; ACTION_NOT_FOUND when there is none.
func (s *Store) FindAction(ctx context.Context, id string) (*domain.Action, error) {
	var version int64
	var doc []byte
	err := s.db.QueryRow(ctx, `SELECT version, doc FROM actions WHERE id = ?`, id).Scan(&version, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, actionNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("find action %s: %w", id, err)
	}
	return s.action(doc, version)
}

// UpdateAction applies fn to action id as stored and stores the result on the version it
// was read at, reading again and applying fn anew when another writer moved first. fn
// runs before the write, outside the writer.
func (s *Store) UpdateAction(ctx context.Context, id string, fn func(*domain.Action) error) (*domain.Action, error) {
	for tries := 1; ; tries++ {
		a, err := s.FindAction(ctx, id)
		if err != nil {
			return nil, err
		}
		read := a.Version
		if err := fn(a); err != nil {
			return nil, err
		}
		a.ID, a.Version = id, read+1
		doc, err := s.actionDoc(a)
		if err != nil {
			return nil, fmt.Errorf("update action %s: %w", id, err)
		}
		err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
			n, err := tx.ExecAffected(`UPDATE actions SET status = ?, workflow = ?, workflow_name = ?, decided_at = ?,
				unapplied = ?, version = ?, doc = ? WHERE id = ? AND version = ?`,
				string(a.Status), a.Workflow, a.WorkflowName, nanos(a.DecidedAt), unapplied(a), a.Version, doc, id, read)
			if err != nil || n == 1 {
				return err
			}
			if found, err := exists(tx, `SELECT 1 FROM actions WHERE id = ?`, id); err != nil || !found {
				return cmpErr(err, actionNotFound(id))
			}
			return errRetry
		})
		switch {
		case err == nil:
			return a, nil
		case !errors.Is(err, errRetry):
			if apperr.HasReason(err, apperr.ActionNotFound) {
				return nil, err
			}
			return nil, fmt.Errorf("update action %s: %w", id, err)
		case tries >= updateTries:
			return nil, fmt.Errorf("update action %s: %w", id, domain.ErrConflict)
		}
	}
}

// cmpErr is err, else other.
func cmpErr(err, other error) error {
	if err != nil {
		return err
	}
	return other
}

// findActions reads the actions of a query answering version and doc.
func (s *Store) findActions(ctx context.Context, query string, args ...any) ([]*domain.Action, error) {
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("find actions: %w", err)
	}
	defer rows.Close()
	out := []*domain.Action{}
	for rows.Next() {
		var version int64
		var doc []byte
		if err := rows.Scan(&version, &doc); err != nil {
			return nil, fmt.Errorf("find actions: %w", err)
		}
		a, err := s.action(doc, version)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// FindRunActions lists the actions of run, open or not, oldest first.
func (s *Store) FindRunActions(ctx context.Context, run string) ([]*domain.Action, error) {
	return s.findActions(ctx, `SELECT version, doc FROM actions WHERE run_id = ? ORDER BY created, id`, run)
}

// FindUnapplied lists the actions decided before before whose decision their run has not
// taken, oldest decision first.
func (s *Store) FindUnapplied(ctx context.Context, before time.Time) ([]*domain.Action, error) {
	return s.findActions(ctx, `SELECT version, doc FROM actions WHERE unapplied = 1 AND decided_at < ?
		ORDER BY decided_at, id`, before.UnixNano())
}

// actionFilter is the WHERE clause of the actions f selects.
func actionFilter(f domain.ActionFilter) where {
	w := where{}
	w.add("team = ?", f.Team)
	w.in("type", f.Types)
	w.in("status", f.Statuses)
	w.in("workflow", f.Workflows)
	if f.From != nil {
		w.add("created >= ?", f.From.UnixNano())
	}
	if f.To != nil {
		w.add("created <= ?", f.To.UnixNano())
	}
	return w
}

// FindActions answers one page of the actions f selects, in order o (by the workflow's
// name as the action shows it, by status, else by creation date; then by id), and how
// many f selects in all.
func (s *Store) FindActions(ctx context.Context, f domain.ActionFilter, o domain.ActionSort, p page.Request) ([]*domain.Action, int64, error) {
	w := actionFilter(f)
	var total int64
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM actions`+w.String(), w.args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count actions: %w", err)
	}
	by := "created"
	switch o.Field {
	case "name":
		by = "workflow_name"
	case "status":
		by = "status"
	}
	dir := " DESC"
	if o.Asc {
		dir = ""
	}
	found, err := s.findActions(ctx, `SELECT version, doc FROM actions`+w.String()+` ORDER BY `+by+dir+`, id`+dir+
		` LIMIT ? OFFSET ?`, append(w.args, p.Size, p.Offset())...)
	return found, total, err
}

// CountActions counts the actions f selects for a summary.
func (s *Store) CountActions(ctx context.Context, f domain.ActionFilter) (domain.ActionCounts, error) {
	var c domain.ActionCounts
	w := actionFilter(f)
	rows, err := s.db.Query(ctx, `SELECT type, status, count(*) FROM actions`+w.String()+` GROUP BY type, status`, w.args...)
	if err != nil {
		return c, fmt.Errorf("count actions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var typ domain.ActionType
		var status domain.ActionStatus
		var n int64
		if err := rows.Scan(&typ, &status, &n); err != nil {
			return c, fmt.Errorf("count actions: %w", err)
		}
		switch typ {
		case domain.ApprovalAction:
			c.Approvals += n
			if status.Open() {
				c.OpenApprovals += n
			} else {
				c.ApprovalsClosed += n
			}
		case domain.ManualAction:
			if status.Open() {
				c.OpenManual += n
			}
		}
	}
	return c, rows.Err()
}

// DeleteTeamActions forgets team's actions.
func (s *Store) DeleteTeamActions(ctx context.Context, team string) error {
	return s.write(ctx, "delete the actions of "+team, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`DELETE FROM actions WHERE team = ?`, team)
		return err
	})
}

package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

const (
	qTeamByName = `SELECT version, doc FROM teams WHERE name = ?`
	qTeamByID   = `SELECT name FROM teams WHERE id = ?`
	qTeamsOf    = `SELECT t.version, t.doc FROM team_members m JOIN teams t ON t.id = m.team WHERE m.user_id = ? ORDER BY m.name`
	qTeamTaken  = `SELECT 1 FROM teams WHERE name = ?`
)

// CreateTeam stores t with the events it owes; a taken name fails with
// domain.TeamNameTaken.
func (s *Store) CreateTeam(ctx context.Context, t domain.Team, owed []outbox.Entry) error {
	doc, err := encode(t)
	if err != nil {
		return fmt.Errorf("team %s: %w", t.Name, err)
	}
	err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		if _, err := tx.Exec(`INSERT INTO teams (id, name, status, created, version, doc) VALUES (?, ?, ?, ?, ?, ?)`,
			t.ID, t.Name, string(t.Status), millis(t.CreationDate), t.Version, string(doc)); err != nil {
			return err
		}
		if err := insertMembers(tx, t); err != nil {
			return err
		}
		return insertOutbox(tx, owed)
	})
	if sqlitex.IsUnique(err) {
		return domain.TeamNameTaken(t.Name)
	}
	if err != nil {
		return fmt.Errorf("insert team %s: %w", t.Name, err)
	}
	if len(owed) > 0 {
		s.Nudge()
	}
	return nil
}

// insertMembers indexes the team's members, for FindTeamsByMember: by user, then by the
// team's name, the order the teams are answered in.
func insertMembers(tx *sqlitex.Tx, t domain.Team) error {
	for _, m := range t.Members {
		if _, err := tx.Exec(`INSERT OR IGNORE INTO team_members (user_id, name, team) VALUES (?, ?, ?)`, m.UserID, t.Name, t.ID); err != nil {
			return err
		}
	}
	return nil
}

// scanTeam reads a team's version and doc.
func scanTeam(row scanner) (domain.Team, error) {
	var version int64
	var doc []byte
	if err := row.Scan(&version, &doc); err != nil {
		return domain.Team{}, err
	}
	var t domain.Team
	if err := decode(doc, &t); err != nil {
		return domain.Team{}, err
	}
	t.Version = version
	t.CreationDate = t.CreationDate.UTC()
	// A parameter without a default or value was encoded as null: none, as it was given.
	for i := range t.Parameters {
		p := &t.Parameters[i]
		if string(p.Default) == "null" {
			p.Default = nil
		}
		if string(p.Value) == "null" {
			p.Value = nil
		}
	}
	return t, nil
}

// FindTeamByName returns the team called name.
func (s *Store) FindTeamByName(ctx context.Context, name string) (domain.Team, error) {
	t, err := scanTeam(s.db.QueryRow(ctx, qTeamByName, name))
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Team{}, domain.TeamNotFound(name)
	}
	if err != nil {
		return domain.Team{}, fmt.Errorf("find team %s: %w", name, err)
	}
	return t, nil
}

// UpdateTeam applies fn and writes the result conditionally on the version read.
func (s *Store) UpdateTeam(ctx context.Context, name string, fn func(*domain.Team) error) (domain.Team, error) {
	for range maxAttempts {
		t, err := s.FindTeamByName(ctx, name)
		if err != nil {
			return domain.Team{}, err
		}
		id, created, read := t.ID, t.CreationDate, t.Version
		if err := fn(&t); err != nil {
			return domain.Team{}, err
		}
		// The record's identity stays what it was, whatever fn did.
		t.ID, t.Name, t.CreationDate, t.Version = id, name, created, read
		doc, err := encode(t)
		if err != nil {
			return domain.Team{}, fmt.Errorf("team %s: %w", name, err)
		}
		err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
			n, err := tx.ExecAffected(`UPDATE teams SET status = ?, version = version + 1, doc = ? WHERE name = ? AND version = ?`,
				string(t.Status), string(doc), name, read)
			if err != nil {
				return err
			}
			if n == 0 {
				return errLost
			}
			if _, err := tx.Exec(`DELETE FROM team_members WHERE team = ?`, t.ID); err != nil {
				return err
			}
			return insertMembers(tx, t)
		})
		if errors.Is(err, errLost) {
			continue
		}
		if err != nil {
			return domain.Team{}, fmt.Errorf("update team %s: %w", name, err)
		}
		t.Version = read + 1
		return t, nil
	}
	return domain.Team{}, busy(fmt.Sprintf("Team '%s'", name))
}

// DeleteTeam removes the team and stores the events owed computes for it, in one
// transaction.
func (s *Store) DeleteTeam(ctx context.Context, name string, owed func(domain.Team) ([]outbox.Entry, error)) error {
	for range maxAttempts {
		t, err := s.FindTeamByName(ctx, name)
		if err != nil {
			return err
		}
		entries, err := owed(t)
		if err != nil {
			return err
		}
		err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
			n, err := tx.ExecAffected(`DELETE FROM teams WHERE id = ? AND version = ?`, t.ID, t.Version)
			if err != nil {
				return err
			}
			if n == 0 {
				return errLost
			}
			return insertOutbox(tx, entries)
		})
		if errors.Is(err, errLost) {
			continue
		}
		if err != nil {
			return fmt.Errorf("delete team %s: %w", name, err)
		}
		if len(entries) > 0 {
			s.Nudge()
		}
		return nil
	}
	return busy(fmt.Sprintf("Team '%s'", name))
}

var teamSortColumns = map[string]string{"name": "name", "creationDate": "created", "status": "status"}

// FindTeams returns one page of the teams matching f, and how many match in all.
func (s *Store) FindTeams(ctx context.Context, f domain.TeamFilter, p page.Request) ([]domain.Team, int64, error) {
	var conds []string
	var args []any
	if len(f.Names) > 0 {
		conds = append(conds, "name IN ("+placeholders(len(f.Names))+")")
		for _, n := range f.Names {
			args = append(args, n)
		}
	}
	if len(f.Statuses) > 0 {
		conds = append(conds, "status IN ("+placeholders(len(f.Statuses))+")")
		for _, st := range f.Statuses {
			args = append(args, string(st))
		}
	}
	if len(f.Labels) > 0 {
		c, a := labelsMatch(f.Labels)
		conds = append(conds, c)
		args = append(args, a...)
	}
	if f.MemberID != "" {
		conds = append(conds, "id IN (SELECT team FROM team_members WHERE user_id = ?)")
		args = append(args, f.MemberID)
	}
	col, ok := teamSortColumns[p.Sort]
	if !ok {
		col = "name"
	}
	return search[domain.Team]{table: "teams", cols: "version, doc", sort: col, conds: conds, args: args, scan: scanTeams}.run(ctx, s.db, p)
}

func scanTeams(rows *sql.Rows) ([]domain.Team, error) { return scanAll(rows, scanTeam, "teams") }

// FindTeamsByMember returns every team userID belongs to, by name.
func (s *Store) FindTeamsByMember(ctx context.Context, userID string) ([]domain.Team, error) {
	rows, err := s.db.Query(ctx, qTeamsOf, userID)
	if err != nil {
		return nil, fmt.Errorf("find teams of user %s: %w", userID, err)
	}
	return scanTeams(rows)
}

// TeamNameTaken reports whether a team is called name.
func (s *Store) TeamNameTaken(ctx context.Context, name string) (bool, error) {
	var one int
	err := s.db.QueryRow(ctx, qTeamTaken, name).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check team name %s: %w", name, err)
	}
	return true, nil
}

// TeamID returns the record id of the team called name (TokenTeams).
func (s *Store) TeamID(ctx context.Context, name string) (string, error) {
	var id string
	err := s.db.QueryRow(ctx, `SELECT id FROM teams WHERE name = ?`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", domain.TeamNotFound(name)
	}
	if err != nil {
		return "", fmt.Errorf("find team %s: %w", name, err)
	}
	return id, nil
}

// TeamLive reports whether the team with record id exists and is still called name
// (TokenTeams): a deleted team's row is gone, and one created again under the name has
// another id.
func (s *Store) TeamLive(ctx context.Context, id, name string) (bool, error) {
	var got string
	err := s.db.QueryRow(ctx, qTeamByID, id).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find team %s: %w", id, err)
	}
	return got == name, nil
}

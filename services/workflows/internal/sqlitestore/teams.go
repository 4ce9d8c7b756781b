package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// SaveTeam records t by name, keeping its workflow counter.
func (s *Store) SaveTeam(ctx context.Context, t domain.Team) error {
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`INSERT INTO teams (name, team_id, display_name, created) VALUES (?, ?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET team_id = excluded.team_id, display_name = excluded.display_name,
			created = excluded.created`, t.Name, t.ID, t.DisplayName, t.CreationDate.UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("save team %s: %w", t.Name, err)
	}
	return nil
}

// DeleteTeam removes the record of name if it is the incarnation id.
func (s *Store) DeleteTeam(ctx context.Context, name, id string) error {
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`DELETE FROM teams WHERE name = ? AND team_id = ?`, name, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete team %s: %w", name, err)
	}
	return nil
}

// FindTeamByName returns the known team called name, by its primary key.
func (s *Store) FindTeamByName(ctx context.Context, name string) (domain.Team, error) {
	t := domain.Team{Name: name}
	var created int64
	err := s.db.QueryRow(ctx, qFindTeam, name).Scan(&t.ID, &t.DisplayName, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Team{}, apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", name)
	}
	if err != nil {
		return domain.Team{}, fmt.Errorf("find team %s: %w", name, err)
	}
	t.CreationDate = time.UnixMilli(created).UTC()
	return t, nil
}

// ListTeams returns every known team, by name.
func (s *Store) ListTeams(ctx context.Context) ([]domain.Team, error) {
	rows, err := s.db.Query(ctx, `SELECT name, team_id, display_name, created FROM teams ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list teams: %w", err)
	}
	defer rows.Close()
	var out []domain.Team
	for rows.Next() {
		var t domain.Team
		var created int64
		if err := rows.Scan(&t.Name, &t.ID, &t.DisplayName, &created); err != nil {
			return nil, fmt.Errorf("list teams: %w", err)
		}
		t.CreationDate = time.UnixMilli(created).UTC()
		out = append(out, t)
	}
	return out, rows.Err()
}

// ReserveWorkflow counts one more workflow of t unless it has limit already: the check and
// the increment are one conditional update, so racing creates never pass the limit.
func (s *Store) ReserveWorkflow(ctx context.Context, t domain.Team, limit int) (bool, error) {
	var n int64
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		var err error
		n, err = tx.ExecAffected(qReserve, t.Name, t.ID, limit)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("reserve a workflow of team %s: %w", t.Name, err)
	}
	if n == 1 {
		return true, nil
	}
	// No row: the limit is reached, or the team went away meanwhile.
	if _, err := s.FindTeamByName(ctx, t.Name); err != nil {
		return false, err
	}
	return false, nil
}

// ReleaseWorkflow counts one workflow of t less, never below zero.
func (s *Store) ReleaseWorkflow(ctx context.Context, t domain.Team) error {
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(qRelease, t.Name, t.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("release a workflow of team %s: %w", t.Name, err)
	}
	return nil
}

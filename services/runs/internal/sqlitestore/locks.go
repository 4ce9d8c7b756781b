package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// A lock in use is a row of locks (its holder and queue in its doc); lock_runs says which
// runs hold or wait for it, for FindRunLocks. A lock left free is removed. Versions come
// from one sequence, so that a lock removed and taken again never repeats one.

// UpdateLock applies fn to the lock team/key as stored (a free lock, Version 0, when there
// is no record) and stores the result on the version it was read at, reading again and
// applying fn anew when another writer moved first. A lock fn leaves free is removed. fn
// runs before the write, outside the writer.
func (s *Store) UpdateLock(ctx context.Context, team, key string, fn func(*domain.Lock) error) (*domain.Lock, error) {
	for tries := 1; ; tries++ {
		l, err := s.findLock(ctx, team, key)
		if err != nil {
			return nil, err
		}
		read := l.Version
		if err := fn(l); err != nil {
			return nil, err
		}
		l.Team, l.Key = team, key
		free := l.Free()
		var doc []byte
		if !free {
			if doc, err = encode(l); err != nil {
				return nil, fmt.Errorf("update lock %s of %s: %w", key, team, err)
			}
		}
		var version int64
		err = s.db.Write(ctx, func(tx *sqlitex.Tx) error {
			var stored int64
			err := tx.QueryRow(`SELECT version FROM locks WHERE team = ? AND key = ?`, team, key).Scan(&stored)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if stored != read { // 0 when there is no record
				return errRetry
			}
			if _, err := tx.Exec(`DELETE FROM lock_runs WHERE team = ? AND key = ?`, team, key); err != nil {
				return err
			}
			if free {
				version = 0
				_, err := tx.Exec(`DELETE FROM locks WHERE team = ? AND key = ?`, team, key)
				return err
			}
			if err := tx.QueryRow(`UPDATE sequences SET value = value + 1 WHERE name = 'lock' RETURNING value`).Scan(&version); err != nil {
				return err
			}
			if _, err := tx.Exec(`INSERT INTO locks (team, key, version, notified, doc) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (team, key) DO UPDATE SET version = excluded.version, notified = excluded.notified, doc = excluded.doc`,
				team, key, version, l.Notified, doc); err != nil {
				return err
			}
			runs := map[string]bool{}
			if l.Holder.Run != "" {
				runs[l.Holder.Run] = true
			}
			for _, w := range l.Queue {
				runs[w.Run] = true
			}
			for run := range runs {
				if _, err := tx.Exec(`INSERT INTO lock_runs (run, team, key) VALUES (?, ?, ?)`, run, team, key); err != nil {
					return err
				}
			}
			return nil
		})
		switch {
		case err == nil:
			l.Version = version
			return l, nil
		case !errors.Is(err, errRetry):
			return nil, fmt.Errorf("update lock %s of %s: %w", key, team, err)
		case tries >= updateTries:
			return nil, fmt.Errorf("update lock %s of %s: %w", key, team, domain.ErrConflict)
		}
	}
}

// findLock reads a lock, free at version 0 when there is no record.
func (s *Store) findLock(ctx context.Context, team, key string) (*domain.Lock, error) {
	var version int64
	var doc []byte
	err := s.db.QueryRow(ctx, `SELECT version, doc FROM locks WHERE team = ? AND key = ?`, team, key).Scan(&version, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return &domain.Lock{Team: team, Key: key}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find lock %s of %s: %w", key, team, err)
	}
	return lockOf(doc, version)
}

func lockOf(doc []byte, version int64) (*domain.Lock, error) {
	var l domain.Lock
	if err := decode(doc, &l); err != nil {
		return nil, err
	}
	l.Version = version
	return &l, nil
}

// findLocks reads the locks of a query answering version and doc.
func (s *Store) findLocks(ctx context.Context, query string, args ...any) ([]domain.Lock, error) {
	rows, err := s.db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("find locks: %w", err)
	}
	defer rows.Close()
	var out []domain.Lock
	for rows.Next() {
		var version int64
		var doc []byte
		if err := rows.Scan(&version, &doc); err != nil {
			return nil, fmt.Errorf("find locks: %w", err)
		}
		l, err := lockOf(doc, version)
		if err != nil {
			return nil, err
		}
		out = append(out, *l)
	}
	return out, rows.Err()
}

// FindRunLocks lists the locks run holds or waits for, by team and key.
func (s *Store) FindRunLocks(ctx context.Context, run string) ([]domain.Lock, error) {
	return s.findLocks(ctx, `SELECT l.version, l.doc FROM lock_runs r JOIN locks l ON l.team = r.team AND l.key = r.key
		WHERE r.run = ? ORDER BY r.team, r.key`, run)
}

// FindUntold lists the locks whose holder has not been told, by team and key.
func (s *Store) FindUntold(ctx context.Context) ([]domain.Lock, error) {
	return s.findLocks(ctx, `SELECT version, doc FROM locks WHERE notified = 0 ORDER BY team, key`)
}

// DeleteTeamLocks forgets team's locks.
func (s *Store) DeleteTeamLocks(ctx context.Context, team string) error {
	return s.write(ctx, "delete the locks of "+team, func(tx *sqlitex.Tx) error {
		for _, q := range []string{`DELETE FROM lock_runs WHERE team = ?`, `DELETE FROM locks WHERE team = ?`} {
			if _, err := tx.Exec(q, team); err != nil {
				return err
			}
		}
		return nil
	})
}

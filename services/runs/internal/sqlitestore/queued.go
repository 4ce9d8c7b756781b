package sqlitestore

import (
	"context"
	"fmt"

	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Statements of the hot paths, named for the test that checks each goes by an index.
const (
	qFindQueued = `SELECT doc FROM queued WHERE team = ? AND queue = ? ORDER BY at, id LIMIT ?`
)

// PutQueued stores queued attempts; one stored already under its id is kept as it is.
func (s *Store) PutQueued(ctx context.Context, qs []domain.QueuedAttempt) error {
	docs := make([][]byte, len(qs))
	for i := range qs {
		var err error
		if docs[i], err = encode(&qs[i]); err != nil {
			return err
		}
	}
	return s.write(ctx, "queue attempts", func(tx *sqlitex.Tx) error {
		for i, q := range qs {
			if _, err := tx.Exec(`INSERT INTO queued (id, team, queue, at, doc) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
				q.ID, q.Team, q.Queue, q.At.UnixNano(), docs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// FindQueued answers at most limit attempts waiting in queue of team, oldest first.
func (s *Store) FindQueued(ctx context.Context, team, queue string, limit int) ([]domain.QueuedAttempt, error) {
	rows, err := s.db.Query(ctx, qFindQueued, team, queue, limit)
	if err != nil {
		return nil, fmt.Errorf("queued attempts of %s: %w", queue, err)
	}
	defer rows.Close()
	var out []domain.QueuedAttempt
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, fmt.Errorf("queued attempts of %s: %w", queue, err)
		}
		var q domain.QueuedAttempt
		if err := decode(doc, &q); err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, rows.Err()
}

// DeleteQueued deletes the queued attempts of ids; those not stored are no error.
func (s *Store) DeleteQueued(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.write(ctx, "delete queued attempts", func(tx *sqlitex.Tx) error {
		for _, id := range ids {
			if _, err := tx.Exec(`DELETE FROM queued WHERE id = ?`, id); err != nil {
				return err
			}
		}
		return nil
	})
}

package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Statements of the hot paths, named for the test that checks each goes by an index.
const (
	qFindOwed = `SELECT id, owed_at, doc FROM runs WHERE owed_at IS NOT NULL AND owed_at < ?
		ORDER BY owed_at LIMIT ?`
)

// A run put away that still owes status events keeps them in its doc (Owed), and owed_at
// says when they were last sent: at its end, then each time they are sent again. The runs
// owing are found by owed_at alone (a partial index of those owing).

// FindOwed answers at most limit runs put away whose owed events were last sent before
// before, those sent longest ago first.
func (s *Store) FindOwed(ctx context.Context, before time.Time, limit int) ([]domain.OwedRun, error) {
	rows, err := s.db.Query(ctx, qFindOwed, before.UnixNano(), limit)
	if err != nil {
		return nil, fmt.Errorf("find runs owing events: %w", err)
	}
	defer rows.Close()
	var out []domain.OwedRun
	for rows.Next() {
		var o domain.OwedRun
		var at int64
		var doc []byte
		if err := rows.Scan(&o.Run, &at, &doc); err != nil {
			return nil, fmt.Errorf("find runs owing events: %w", err)
		}
		var owed struct{ Owed []domain.OwedEvent }
		if err := decode(doc, &owed); err != nil {
			return nil, err
		}
		o.Owed, o.At = owed.Owed, time.Unix(0, at).UTC()
		out = append(out, o)
	}
	return out, rows.Err()
}

// DelayOwed records that run, put away, sent the events it owes again at.
func (s *Store) DelayOwed(ctx context.Context, run string, at time.Time) error {
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`UPDATE runs SET owed_at = ? WHERE id = ? AND owed_at IS NOT NULL`, at.UnixNano(), run)
		return err
	})
	if err != nil {
		return fmt.Errorf("delay the events of %s: %w", run, err)
	}
	return nil
}

// ClearOwed drops, from each run put away in recorded, the owed events of the numbers it
// holds there; a run with none left owes nothing.
func (s *Store) ClearOwed(ctx context.Context, recorded map[string]map[int64]bool) error {
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		for id, seqs := range recorded {
			var doc []byte
			err := tx.QueryRow(`SELECT doc FROM runs WHERE id = ? AND live = 0 AND owed_at IS NOT NULL`, id).Scan(&doc)
			if errors.Is(err, sql.ErrNoRows) {
				continue // not put away, or owing nothing
			}
			if err != nil {
				return err
			}
			// The doc as stored, sealed values untouched: only Owed changes.
			var r domain.Run
			if err := decode(doc, &r); err != nil {
				return err
			}
			left := domain.Unrecorded(r.Owed, seqs)
			if len(left) == len(r.Owed) {
				continue
			}
			r.Owed = left
			if doc, err = encode(&r); err != nil {
				return err
			}
			q := `UPDATE runs SET doc = ? WHERE id = ?`
			if len(left) == 0 {
				q = `UPDATE runs SET doc = ?, owed_at = NULL WHERE id = ?`
			}
			if _, err := tx.Exec(q, doc, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clear events recorded: %w", err)
	}
	return nil
}

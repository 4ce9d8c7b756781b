package memstore

import (
	"context"
	"sort"
	"time"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// ClearOwed drops, from each run put away in recorded, the events of the numbers it holds
// there, and what marks it as owing when none is left.
func (s *Store) ClearOwed(_ context.Context, recorded map[string]map[int64]bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, seqs := range recorded {
		rec, ok := s.archive[id]
		if !ok || len(rec.run.Owed) == 0 {
			continue
		}
		if rec.run.Owed = domain.Unrecorded(rec.run.Owed, seqs); len(rec.run.Owed) == 0 {
			delete(s.owedAt, id)
		}
	}
	return nil
}

// FindOwed answers at most limit runs put away that owe events last sent before before,
// those sent longest ago first.
func (s *Store) FindOwed(_ context.Context, before time.Time, limit int) ([]domain.OwedRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.OwedRun
	for id, at := range s.owedAt {
		if rec, ok := s.archive[id]; ok && at.Before(before) {
			out = append(out, domain.OwedRun{Run: id, Owed: clone(rec.run.Owed), At: at})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out[:min(len(out), limit)], nil
}

// DelayOwed records that run, put away, sent the events it owes again at.
func (s *Store) DelayOwed(_ context.Context, run string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.owedAt[run]; ok {
		s.owedAt[run] = at
	}
	return nil
}

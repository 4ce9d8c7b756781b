package memstore

import (
	"context"
	"sort"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// PutQueued stores queued attempts; one stored already under its id is kept as it is.
func (s *Store) PutQueued(_ context.Context, qs []domain.QueuedAttempt) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queued == nil {
		s.queued = map[string]domain.QueuedAttempt{}
	}
	for _, q := range qs {
		if _, ok := s.queued[q.ID]; !ok {
			s.queued[q.ID] = q
		}
	}
	return nil
}

// FindQueued answers at most limit attempts waiting in queue of team, oldest first.
func (s *Store) FindQueued(_ context.Context, team, queue string, limit int) ([]domain.QueuedAttempt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.QueuedAttempt
	for _, q := range s.queued {
		if q.Team == team && q.Queue == queue {
			out = append(out, q)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.Before(out[j].At)
		}
		return out[i].ID < out[j].ID
	})
	return out[:min(len(out), limit)], nil
}

// DeleteQueued deletes the queued attempts of ids; those not stored are no error.
func (s *Store) DeleteQueued(_ context.Context, ids ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.queued, id)
	}
	return nil
}

package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

func lockKey(team, key string) string { return team + "/" + key }

// UpdateLock applies fn to the lock team/key as stored (a free lock, Version 0, when there
// is no record) and stores the result on the version it was read at, reading again and
// applying fn anew when another writer moved first. A lock fn leaves free is removed. fn
// runs outside the store's lock, as it would against a database.
func (s *Store) UpdateLock(_ context.Context, team, key string, fn func(*domain.Lock) error) (*domain.Lock, error) {
	k := lockKey(team, key)
	for tries := 1; ; tries++ {
		s.mu.Lock()
		l, ok := s.locks[k]
		if ok {
			l = clone(l)
		} else {
			l = domain.Lock{Team: team, Key: key}
		}
		s.mu.Unlock()
		read := l.Version
		if err := fn(&l); err != nil {
			return nil, err
		}
		l.Team, l.Key = team, key
		s.mu.Lock()
		if s.locks[k].Version == read { // 0 when there is no record
			if l.Free() {
				delete(s.locks, k)
				l.Version = 0
			} else {
				s.lockVersion++
				l.Version = s.lockVersion
				s.locks[k] = clone(l)
			}
			s.mu.Unlock()
			return &l, nil
		}
		s.mu.Unlock()
		if tries >= updateTries {
			return nil, fmt.Errorf("update lock %s of %s: %w", key, team, domain.ErrConflict)
		}
	}
}

// selectLocks answers copies of the locks keep selects, by team and key.
func (s *Store) selectLocks(keep func(*domain.Lock) bool) []domain.Lock {
	var out []domain.Lock
	for _, l := range s.locks {
		if keep(&l) {
			out = append(out, clone(l))
		}
	}
	slices.SortFunc(out, func(a, b domain.Lock) int { return cmp.Or(cmp.Compare(a.Team, b.Team), cmp.Compare(a.Key, b.Key)) })
	return out
}

// FindRunLocks lists the locks run holds or waits for, by team and key.
func (s *Store) FindRunLocks(_ context.Context, run string) ([]domain.Lock, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.selectLocks(func(l *domain.Lock) bool {
		return l.Holder.Run == run || slices.ContainsFunc(l.Queue, func(w domain.Waiter) bool { return w.Run == run })
	}), nil
}

// FindUntold lists the locks whose holder has not been told, by team and key.
func (s *Store) FindUntold(context.Context) ([]domain.Lock, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.selectLocks(func(l *domain.Lock) bool { return !l.Notified }), nil
}

// DeleteTeamLocks forgets team's locks.
func (s *Store) DeleteTeamLocks(_ context.Context, team string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, l := range s.locks {
		if l.Team == team {
			delete(s.locks, k)
		}
	}
	return nil
}

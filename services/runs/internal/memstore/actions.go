package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// updateTries bounds how often an update of an action or a lock reads and tries again
// after losing a race.
const updateTries = 100

func actionNotFound(id string) error {
	return apperr.New(apperr.ActionNotFound, "Action '%s' was not found.", id)
}

// CreateAction stores a new action; one stored with its id already is kept as it is.
func (s *Store) CreateAction(_ context.Context, a *domain.Action) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.actions[a.ID]; !ok {
		s.actions[a.ID] = clone(*a)
	}
	return nil
}

// FindAction reads one action; ACTION_NOT_FOUND when there is none.
func (s *Store) FindAction(_ context.Context, id string) (*domain.Action, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.actions[id]
	if !ok {
		return nil, actionNotFound(id)
	}
	out := clone(a)
	return &out, nil
}

// UpdateAction applies fn to action id as stored and stores the result on the version it
// was read at, reading again and applying fn anew when another writer moved first. fn runs
// outside the store's lock, as it would against a database.
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
		s.mu.Lock()
		stored, ok := s.actions[id]
		switch {
		case !ok:
			s.mu.Unlock()
			return nil, actionNotFound(id)
		case stored.Version == read:
			s.actions[id] = clone(*a)
			s.mu.Unlock()
			return a, nil
		}
		s.mu.Unlock()
		if tries >= updateTries {
			return nil, fmt.Errorf("update action %s: %w", id, domain.ErrConflict)
		}
	}
}

// selectActions answers copies of the actions keep selects.
func (s *Store) selectActions(keep func(*domain.Action) bool) []*domain.Action {
	var out []*domain.Action
	for _, a := range s.actions {
		if keep(&a) {
			c := clone(a)
			out = append(out, &c)
		}
	}
	return out
}

// FindRunActions lists the actions of run, oldest first.
func (s *Store) FindRunActions(_ context.Context, run string) ([]*domain.Action, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.selectActions(func(a *domain.Action) bool { return a.RunID == run })
	slices.SortFunc(out, func(a, b *domain.Action) int {
		return cmp.Or(a.CreationDate.Compare(b.CreationDate), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// FindUnapplied lists the actions decided before before whose decision their run has not
// taken, oldest decision first.
func (s *Store) FindUnapplied(_ context.Context, before time.Time) ([]*domain.Action, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.selectActions(func(a *domain.Action) bool {
		return !a.Status.Open() && !a.Applied && a.DecidedAt.Before(before)
	})
	slices.SortFunc(out, func(a, b *domain.Action) int {
		return cmp.Or(a.DecidedAt.Compare(b.DecidedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// matchesAction reports whether f selects a.
func matchesAction(f domain.ActionFilter, a *domain.Action) bool {
	in := func(vals []string, v string) bool { return len(vals) == 0 || slices.Contains(vals, v) }
	switch {
	case a.Team != f.Team, !in(f.Types, string(a.Type)), !in(f.Statuses, string(a.Status)), !in(f.Workflows, a.Workflow):
		return false
	case f.From != nil && a.CreationDate.Before(*f.From), f.To != nil && a.CreationDate.After(*f.To):
		return false
	}
	return true
}

// actionOrder compares actions by the field a search sorts on ("name" is the workflow's
// name as the action shows it; anything else but "status" is the creation date), then by
// id, ascending.
func actionOrder(field string) func(a, b *domain.Action) int {
	by := func(a, b *domain.Action) int { return a.CreationDate.Compare(b.CreationDate) }
	switch field {
	case "name":
		by = func(a, b *domain.Action) int { return cmp.Compare(a.WorkflowName, b.WorkflowName) }
	case "status":
		by = func(a, b *domain.Action) int { return cmp.Compare(a.Status, b.Status) }
	}
	return func(a, b *domain.Action) int { return cmp.Or(by(a, b), cmp.Compare(a.ID, b.ID)) }
}

// FindActions answers one page of the actions f selects, in order o, and how many f
// selects in all.
func (s *Store) FindActions(_ context.Context, f domain.ActionFilter, o domain.ActionSort, p page.Request) ([]*domain.Action, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.selectActions(func(a *domain.Action) bool { return matchesAction(f, a) })
	slices.SortFunc(all, actionOrder(o.Field))
	if !o.Asc {
		slices.Reverse(all)
	}
	from := min(int(p.Offset()), len(all))
	return all[from:min(from+p.Size, len(all))], int64(len(all)), nil
}

// CountActions counts the actions f selects for a summary.
func (s *Store) CountActions(_ context.Context, f domain.ActionFilter) (domain.ActionCounts, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var c domain.ActionCounts
	for _, a := range s.actions {
		if !matchesAction(f, &a) {
			continue
		}
		open := a.Status.Open()
		switch a.Type {
		case domain.ApprovalAction:
			c.Approvals++
			if open {
				c.OpenApprovals++
			} else {
				c.ApprovalsClosed++
			}
		case domain.ManualAction:
			if open {
				c.OpenManual++
			}
		}
	}
	return c, nil
}

// DeleteTeamActions forgets team's actions.
func (s *Store) DeleteTeamActions(_ context.Context, team string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, a := range s.actions {
		if a.Team == team {
			delete(s.actions, id)
		}
	}
	return nil
}

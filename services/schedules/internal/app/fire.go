package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// Submitter starts the run of a schedule's fire (the runs service). It is idempotent by
// the fire's key (domain.FireKey): a fire submitted twice makes one run.
type Submitter interface {
	SubmitFire(ctx context.Context, s *domain.Schedule, at time.Time) error
}

// Firer makes the runs schedules owe.
type Firer struct {
	Store Store
	Runs  Submitter
}

// Fire makes the runs that schedule id of team owes at now, oldest first, then stores it
// moved on: its last fire and its next one (a runOnce schedule completed). A fire is
// submitted before the schedule moves past it, so a replica that dies in between leaves
// the fire to the next one, which submits it again under the same key: each fire makes one
// run, whatever dies when. A save that loses to another writer is that writer's move; the
// schedule as it stored it is answered.
func (f *Firer) Fire(ctx context.Context, team, id string, now time.Time) (*domain.Schedule, error) {
	for range saveTries {
		s, err := f.Store.FindSchedule(ctx, team, id)
		if err != nil {
			return nil, err
		}
		if !s.Fires() || s.Next.IsZero() || s.Next.After(now) {
			return s, nil
		}
		fires, next := s.Plan(now)
		for _, at := range fires {
			if err := f.Runs.SubmitFire(ctx, s, at); err != nil {
				return nil, fmt.Errorf("fire schedule %s at %s: %w", id, at.Format(time.RFC3339), err)
			}
			s.Last = at
		}
		s.Next = next
		if s.Type == domain.TypeRunOnce && next.IsZero() {
			s.Status = domain.StatusCompleted
		}
		err = f.Store.SaveSchedule(ctx, s)
		if errors.Is(err, domain.ErrConflict) {
			continue // moved meanwhile: decide again on what is stored
		}
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("fire schedule %s: %w", id, domain.ErrConflict)
}

// saveTries bounds the reads of a schedule that keeps losing its save to other writers.
const saveTries = 8

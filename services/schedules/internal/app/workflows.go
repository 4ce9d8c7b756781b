package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// WorkflowSaved follows a save of team's workflow: its schedules fire while its schedule
// trigger is on, and are kept, firing nothing, while it is off. A schedule whose trigger
// comes back on fires from now on, owing nothing for the time it was off.
func (s *Schedules) WorkflowSaved(ctx context.Context, team, workflow string, scheduleEnabled bool) error {
	return s.eachOfWorkflow(ctx, team, workflow, func(sch *domain.Schedule) bool {
		if sch.TriggerDisabled == !scheduleEnabled {
			return false
		}
		sch.TriggerDisabled = !scheduleEnabled
		if now := s.d.Now(); scheduleEnabled && sch.Next.Before(now) {
			sch.Next = sch.NextAfter(now)
		}
		return true
	})
}

// WorkflowDeleted archives the schedules of team's deleted workflow.
func (s *Schedules) WorkflowDeleted(ctx context.Context, team, workflow string) error {
	return s.eachOfWorkflow(ctx, team, workflow, func(sch *domain.Schedule) bool {
		sch.Status = domain.StatusArchived
		return true
	})
}

// RunEnded follows the end of a run schedule id started: a fire buffered behind it starts
// now rather than at the schedule's next look at the run.
func (s *Schedules) RunEnded(ctx context.Context, id, run string) error {
	nudged, err := s.d.Store.NudgeBuffered(ctx, id, run, s.d.Now())
	if nudged {
		s.d.Saved()
	}
	return err
}

// TeamDeleted removes a deleted team's schedules.
func (s *Schedules) TeamDeleted(ctx context.Context, team string) error {
	return s.d.Store.DeleteTeamSchedules(ctx, team)
}

// eachOfWorkflow changes each schedule of team's workflow that is not archived as change
// says (false: no change), saving it on the version read and deciding again on what a
// concurrent writer stored.
func (s *Schedules) eachOfWorkflow(ctx context.Context, team, workflow string, change func(*domain.Schedule) bool) error {
	all, err := s.d.Store.FindWorkflowSchedules(ctx, team, workflow)
	if err != nil {
		return err
	}
	saved := false
	for _, sch := range all {
		for try := 0; ; try++ {
			if sch.Status == domain.StatusArchived || !change(sch) {
				break
			}
			err := s.d.Store.SaveSchedule(ctx, sch)
			if err == nil {
				saved = true
				break
			}
			if !errors.Is(err, domain.ErrConflict) || try == saveTries {
				return fmt.Errorf("schedules of %s/%s: %w", team, workflow, err)
			}
			if sch, err = s.d.Store.FindSchedule(ctx, team, sch.ID); err != nil {
				return err
			}
		}
	}
	if saved {
		s.d.Saved()
	}
	return nil
}

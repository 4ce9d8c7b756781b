package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// errNoSchedules is the answer of an engine without a Schedules port.
var errNoSchedules = apperr.New(apperr.RequestInvalid, "no schedules service is configured")

// scheduleRun asks for the runOnce schedule that runscheduledworkflow task i of run wants,
// then ends the task as the answer says: succeeded with the schedule's id, failed on a
// refusal, or, when the schedules service cannot be reached, still running, to ask again
// after a delay (its timer; domain's ScheduleDelayed). The request's key is the task run's
// id, so a step sent again (a recovery, a replica taking over, a new attempt after a
// timeout) finds the schedule an earlier one made rather than making another.
func (e *Engine) scheduleRun(ctx context.Context, run string, i int) {
	var req ScheduleRequest
	var attempt int
	if err := e.Step(ctx, run, func(m *domain.Machine) error {
		r, t := m.S.Run, m.S.Tasks[i]
		if t.Status != domain.Running || !t.WakeAt.IsZero() || r.Phase.Ended() {
			return ErrNoChange
		}
		sr, err := m.ScheduledRun(i)
		if err != nil {
			m.Fail(i, domain.Invalid, err.Error())
			return nil
		}
		attempt = t.Attempt
		req = ScheduleRequest{Team: r.Team, Key: t.ID, Workflow: sr.Workflow, At: sr.At, Timezone: sr.Timezone,
			Params: sr.Params, Secret: sr.Secret, Labels: sr.Labels, Name: t.Name,
			Description: fmt.Sprintf("Made by task '%s' of run %s of workflow '%s'.", t.Name, r.ID, r.Workflow), By: r.InitiatedBy}
		return ErrNoChange
	}); err != nil && !errors.Is(err, ErrNoChange) {
		if ctx.Err() == nil {
			e.log.Warn("cannot read a runscheduledworkflow task", "run", run, "error", err)
		}
		return
	}
	if req.Key == "" {
		return
	}
	made, err := e.createSchedule(ctx, req)
	if ctx.Err() != nil {
		return // stopping: the run's next load asks again, under the same key
	}
	var refusal, unreachable string
	switch {
	case err == nil:
	case refused(err):
		refusal = "cannot schedule the run: " + errMessage(err)
	default:
		unreachable = errMessage(err)
	}
	orphan := false
	err = e.Step(ctx, run, func(m *domain.Machine) error {
		orphan = false
		t := m.S.Tasks[i]
		switch {
		case refusal != "":
			if t.Status != domain.Running || t.Attempt != attempt {
				return ErrStale
			}
			m.Fail(i, domain.Failed, refusal)
		case unreachable != "":
			if !m.ScheduleDelayed(i, attempt, unreachable) {
				return ErrStale
			}
		case t.Results[domain.ScheduleIDResult] == made.ID:
			return ErrNoChange // recorded by an ask this one raced with
		default:
			note := ""
			if made.TriggerDisabled {
				note = "the schedule does not fire while workflow '" + req.Workflow + "' has its schedule trigger off"
			}
			if !m.Scheduled(i, attempt, made.ID, note) {
				orphan = true
				return ErrStale
			}
		}
		return nil
	})
	switch {
	case err != nil && !errors.Is(err, ErrNoChange):
		// The run's next load asks again (domain's Recover), and the key answers this
		// schedule.
		if ctx.Err() == nil {
			e.log.Warn("cannot record a runscheduledworkflow task's schedule", "run", run, "schedule", made.ID, "error", err)
		}
	case orphan:
		e.log.Warn("a schedule was made for a task that no longer wants it (its run or attempt ended meanwhile)",
			"run", run, "task", req.Name, "schedule", made.ID)
	}
}

// createSchedule asks the Schedules port for req.
func (e *Engine) createSchedule(ctx context.Context, req ScheduleRequest) (ScheduleMade, error) {
	if e.sched == nil {
		return ScheduleMade{}, errNoSchedules
	}
	return e.sched.CreateSchedule(ctx, req)
}

// refused reports whether err refuses a request for the request's own reasons (a client
// error: it will be refused again), rather than failing to answer it.
func refused(err error) bool {
	switch apperr.KindOf(err) {
	case apperr.KindInvalid, apperr.KindNotFound, apperr.KindForbidden, apperr.KindUnprocessable, apperr.KindTooLarge:
		return true
	}
	return false
}

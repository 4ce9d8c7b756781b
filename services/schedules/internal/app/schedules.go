package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// resource is the permission resource of schedules.
const resource = "schedule"

// Workflows tells what schedules need to know of a team's workflow.
type Workflows interface {
	// Workflow answers team's workflow name: whether its schedule trigger is on and which
	// of its params are passwords. WORKFLOW_NOT_FOUND when there is none.
	Workflow(ctx context.Context, team, name string) (WorkflowInfo, error)
}

// WorkflowInfo is what schedules know of a workflow.
type WorkflowInfo struct {
	ScheduleEnabled bool
	// Secret names its password params.
	Secret []string
}

// Deps are what the schedule use cases need.
type Deps struct {
	Store     Store
	Workflows Workflows
	Runs      Runs
	// Saved is told of each schedule saved, so the replica's scheduler looks at it at once
	// (nil: nothing is told).
	Saved func()
	// NewID makes schedule ids; Now is the clock (time.Now when nil).
	NewID func() string
	Now   func() time.Time
}

// Schedules is the team schedule use cases. Every method authorizes the principal of its
// context: `schedule/<action>` in the schedule's workflow, so a workflow's token reaches
// that workflow's schedules only; what starts runs also needs `workflowrun/write` there.
type Schedules struct {
	d Deps
}

// NewSchedules returns the schedule use cases.
func NewSchedules(d Deps) *Schedules {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Saved == nil {
		d.Saved = func() {}
	}
	return &Schedules{d: d}
}

func authorize(ctx context.Context, team, workflow, action string) (auth.Principal, error) {
	return auth.Require(ctx, auth.Scope{Team: team, Workflow: workflow}, resource, action)
}

// authorizeRuns checks what authorize does, and that the caller may start the workflow's
// runs: a schedule starts them on its maker's behalf, so only one who could may make it.
func authorizeRuns(ctx context.Context, team, workflow string) (auth.Principal, error) {
	if _, err := authorize(ctx, team, workflow, "write"); err != nil {
		return auth.Principal{}, err
	}
	return auth.Require(ctx, auth.Scope{Team: team, Workflow: workflow}, "workflowrun", "write")
}

// ownWorkflow is the workflow a workflow's token is confined to, else "".
func ownWorkflow(ctx context.Context) string {
	if p, ok := auth.FromContext(ctx); ok && p.Type == auth.TypeWorkflow {
		return p.Workflow
	}
	return ""
}

// find reads a schedule of team the caller may do action on; one of another workflow than
// a workflow token's is not found.
func (s *Schedules) find(ctx context.Context, team, id, action string) (*domain.Schedule, error) {
	if _, err := authorize(ctx, team, ownWorkflow(ctx), action); err != nil {
		return nil, err
	}
	sch, err := s.d.Store.FindSchedule(ctx, team, id)
	if err != nil {
		return nil, err
	}
	if w := ownWorkflow(ctx); w != "" && w != sch.Workflow {
		return nil, notFound(id)
	}
	if _, err := authorize(ctx, team, sch.Workflow, action); err != nil {
		return nil, err
	}
	return sch, nil
}

func notFound(id string) error {
	return apperr.New(apperr.ScheduleNotFound, "Schedule '%s' was not found.", id)
}

// invalid answers a field error as the contract's reason for that field.
func invalid(err error) error {
	var fe *domain.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	reason := apperr.ScheduleInvalidReq
	switch {
	case errors.Is(err, domain.ErrNeverFires):
		// API.md §6: an expression of the dialect that never fires is a request that
		// cannot be, not a malformed expression.
	case fe.Field == "cronSchedule":
		reason = apperr.ScheduleInvalidCron
	case fe.Field == "dateSchedule":
		reason = apperr.ScheduleInvalidRunOnce
	}
	return apperr.Invalid(reason, fe.Field+" "+fe.Message+".", apperr.FieldError{Field: fe.Field, Message: fe.Message})
}

// Create stores body as a new schedule of team, active unless it says inactive.
func (s *Schedules) Create(ctx context.Context, team string, body domain.Schedule) (*domain.Schedule, error) {
	p, err := authorizeRuns(ctx, team, body.Workflow)
	if err != nil {
		return nil, err
	}
	by := domain.Initiator{Type: p.Type, ID: p.ID, Name: cmp.Or(p.Name, p.Email, p.ID), Person: p.Person}
	return s.create(ctx, team, s.d.NewID(), body, by, nil)
}

// create stores body as team's new schedule id, made by by, once it holds and its workflow
// exists; secret names params beyond the workflow's password ones that hold a secret.
// domain.ErrConflict when a schedule id exists already.
func (s *Schedules) create(ctx context.Context, team, id string, body domain.Schedule, by domain.Initiator, secret []string) (*domain.Schedule, error) {
	if err := body.Normalize(); err != nil {
		return nil, invalid(err)
	}
	if body.Status != domain.StatusActive && body.Status != domain.StatusInactive {
		return nil, invalid(&domain.FieldError{Field: "status", Message: "of a new schedule is active or inactive"})
	}
	now := s.d.Now()
	if body.Type == domain.TypeRunOnce && !body.Date.After(now) {
		return nil, invalid(&domain.FieldError{Field: "dateSchedule", Message: "is in the past"})
	}
	w, err := s.d.Workflows.Workflow(ctx, team, body.Workflow)
	if err != nil {
		return nil, err
	}
	sch := body
	sch.ID, sch.Team, sch.Created = id, team, now
	sch.TriggerDisabled, sch.Secret = !w.ScheduleEnabled, w.Secret
	for _, name := range secret {
		if !slices.Contains(sch.Secret, name) {
			sch.Secret = append(slices.Clip(sch.Secret), name) // never into the workflow's list
		}
	}
	sch.CreatedBy = by
	sch.Next = sch.NextAfter(now)
	sch.Last, sch.LastRun, sch.Pending, sch.Buffered, sch.Recheck = time.Time{}, "", nil, time.Time{}, time.Time{}
	sch.Params = unmasked(sch.Params, nil, sch.Secret)
	if err := s.d.Store.CreateSchedule(ctx, &sch); err != nil {
		return nil, err
	}
	s.d.Saved()
	return &sch, nil
}

// Apply replaces team's schedule body.ID with body (creating it when body has no id);
// created reports which. Archived schedules are read-only. Values of password params sent
// back masked keep what they were.
func (s *Schedules) Apply(ctx context.Context, team string, body domain.Schedule) (*domain.Schedule, bool, error) {
	if body.ID == "" {
		sch, err := s.Create(ctx, team, body)
		return sch, err == nil, err
	}
	if err := body.Normalize(); err != nil {
		return nil, false, invalid(err)
	}
	for range saveTries {
		cur, err := s.find(ctx, team, body.ID, "write")
		if err != nil {
			return nil, false, err
		}
		if _, err := authorizeRuns(ctx, team, body.Workflow); err != nil {
			return nil, false, err
		}
		next, err := s.applied(ctx, cur, body)
		if err != nil {
			return nil, false, err
		}
		err = s.d.Store.SaveSchedule(ctx, next)
		if errors.Is(err, domain.ErrConflict) {
			continue // its scheduler moved it meanwhile: apply the change to what it stored
		}
		if err != nil {
			return nil, false, err
		}
		s.d.Saved()
		return next, false, nil
	}
	return nil, false, apperr.New(apperr.ConcurrentModification, "Schedule '%s' keeps changing; try again.", body.ID)
}

// applied answers cur changed as body says.
func (s *Schedules) applied(ctx context.Context, cur *domain.Schedule, body domain.Schedule) (*domain.Schedule, error) {
	if cur.Status == domain.StatusArchived {
		return nil, apperr.New(apperr.ScheduleInvalidReq, "Schedule '%s' is archived: archived schedules are read-only.", cur.ID)
	}
	if body.Status == domain.StatusCompleted && cur.Status != domain.StatusCompleted {
		return nil, invalid(&domain.FieldError{Field: "status", Message: "completed is a runOnce schedule's after its fire, not one to set"})
	}
	now := s.d.Now()
	next := *cur
	next.Name, next.Description, next.Workflow, next.Type = body.Name, body.Description, body.Workflow, body.Type
	next.Cron, next.Date, next.Timezone, next.Labels = body.Cron, body.Date, body.Timezone, body.Labels
	next.Overlap, next.Misfire, next.CatchupWindow, next.Status = body.Overlap, body.Misfire, body.CatchupWindow, body.Status
	if next.Workflow != cur.Workflow {
		w, err := s.d.Workflows.Workflow(ctx, cur.Team, next.Workflow)
		if err != nil {
			return nil, err
		}
		next.TriggerDisabled, next.Secret = !w.ScheduleEnabled, w.Secret
	}
	next.Params = unmasked(body.Params, cur.Params, next.Secret)
	when := next.Type != cur.Type || next.Cron != cur.Cron || !next.Date.Equal(cur.Date) || next.Timezone != cur.Timezone
	if next.Type == domain.TypeRunOnce && when && !next.Date.After(now) {
		return nil, invalid(&domain.FieldError{Field: "dateSchedule", Message: "is in the past"})
	}
	if cur.Status == domain.StatusCompleted && when && next.Type == domain.TypeRunOnce {
		next.Status = domain.StatusActive // a new date: it fires again
	}
	resumed := next.Status == domain.StatusActive && cur.Status != domain.StatusActive
	if when || resumed && (next.Next.IsZero() || next.Next.Before(now)) {
		// A new plan, or a pause that outlasted its next date: fire from now on, owing
		// nothing for the time it was paused.
		next.Next = next.NextAfter(now)
	}
	return &next, nil
}

// Get reads team's schedule id.
func (s *Schedules) Get(ctx context.Context, team, id string) (*domain.Schedule, error) {
	return s.find(ctx, team, id, "read")
}

// Archive makes team's schedule id archived: it fires no more and is read-only.
func (s *Schedules) Archive(ctx context.Context, team, id string) error {
	for range saveTries {
		sch, err := s.find(ctx, team, id, "delete")
		if err != nil || sch.Status == domain.StatusArchived {
			return err
		}
		sch.Status = domain.StatusArchived
		err = s.d.Store.SaveSchedule(ctx, sch)
		if !errors.Is(err, domain.ErrConflict) {
			return err
		}
	}
	return apperr.New(apperr.ConcurrentModification, "Schedule '%s' keeps changing; try again.", id)
}

// Query answers one page of the team's schedules f selects, oldest first. A workflow's
// token sees its workflow's only.
func (s *Schedules) Query(ctx context.Context, f Filter, r page.Request) (page.Page[*domain.Schedule], error) {
	own := ownWorkflow(ctx)
	if _, err := authorize(ctx, f.Team, own, "read"); err != nil {
		return page.Page[*domain.Schedule]{}, err
	}
	if own != "" {
		if len(f.Workflows) > 0 && !slices.Contains(f.Workflows, own) {
			return page.New([]*domain.Schedule{}, r, 0), nil
		}
		f.Workflows = []string{own}
	}
	items, total, err := s.d.Store.FindSchedules(ctx, f, r)
	if err != nil {
		return page.Page[*domain.Schedule]{}, err
	}
	return page.New(items, r, total), nil
}

// MaxCalendarSchedules bounds the schedules of one calendars request.
const MaxCalendarSchedules = 100

// Calendar is one schedule's planned fires in a window.
type Calendar struct {
	Schedule string
	Dates    []time.Time
}

// Calendars answers every planned fire of each of team's schedules ids in [from, to].
func (s *Schedules) Calendars(ctx context.Context, team string, ids []string, from, to time.Time) ([]Calendar, error) {
	if len(ids) == 0 || len(ids) > MaxCalendarSchedules {
		return nil, apperr.New(apperr.QueryInvalidFilters, "Name between 1 and %d schedules.", MaxCalendarSchedules)
	}
	out := make([]Calendar, 0, len(ids))
	for _, id := range ids {
		sch, err := s.find(ctx, team, id, "read")
		if err != nil {
			return nil, err
		}
		dates, err := sch.Calendar(from, to)
		if err != nil {
			return nil, windowError(err)
		}
		out = append(out, Calendar{Schedule: id, Dates: dates})
	}
	return out, nil
}

func windowError(err error) error {
	var fe *domain.FieldError
	if errors.As(err, &fe) {
		return apperr.Invalid(apperr.QueryInvalidFilters, fe.Field+": "+fe.Message+".", apperr.FieldError{Field: fe.Field, Message: fe.Message})
	}
	return err
}

// Backfilled is what a backfill did: how many fire times its window held, each now one
// run, and how many of those runs it created (the others existed already).
type Backfilled struct {
	Runs, Created int
}

// Backfill submits one run per fire time of team's schedule id in [from, to], oldest
// first, under the live fires' keys: a window backfilled twice, or one live fires already
// covered, makes no run twice. The window's bounds are the calendar's; its overlap policy
// does not apply (the caller asked for every one).
func (s *Schedules) Backfill(ctx context.Context, team, id string, from, to time.Time) (Backfilled, error) {
	sch, err := s.find(ctx, team, id, "write")
	if err != nil {
		return Backfilled{}, err
	}
	if _, err := authorizeRuns(ctx, team, sch.Workflow); err != nil {
		return Backfilled{}, err
	}
	if sch.Status == domain.StatusArchived {
		return Backfilled{}, apperr.New(apperr.ScheduleInvalidReq, "Schedule '%s' is archived: archived schedules are read-only.", id)
	}
	if to.After(s.d.Now()) {
		return Backfilled{}, apperr.Invalid(apperr.ScheduleInvalidReq, "toDate is in the future: a backfill makes the runs of past fires.",
			apperr.FieldError{Field: "toDate", Message: "is in the future"})
	}
	dates, err := sch.Calendar(from, to)
	if err != nil {
		var fe *domain.FieldError
		if errors.As(err, &fe) {
			return Backfilled{}, apperr.Invalid(apperr.ScheduleInvalidReq, fe.Field+": "+fe.Message+".", apperr.FieldError{Field: fe.Field, Message: fe.Message})
		}
		return Backfilled{}, err
	}
	if n := len(dates); n == domain.MaxCalendarDates {
		if more := sch.NextAfter(dates[n-1]); !more.IsZero() && !more.After(to) {
			return Backfilled{}, apperr.Invalid(apperr.ScheduleInvalidReq,
				fmt.Sprintf("The window holds more than %d fires: backfill it in parts.", domain.MaxCalendarDates),
				apperr.FieldError{Field: "toDate", Message: fmt.Sprintf("the window holds more than %d fires", domain.MaxCalendarDates)})
		}
	}
	var out Backfilled
	for _, at := range dates {
		_, created, err := s.d.Runs.Submit(ctx, sch, at)
		if err != nil {
			return out, fmt.Errorf("backfill schedule %s at %s (%d runs made before): %w", id, at.Format(time.RFC3339), out.Runs, err)
		}
		out.Runs++
		if created {
			out.Created++
		}
	}
	return out, nil
}

// unmasked answers params with each password param sent as the mask given the value it
// had in old.
func unmasked(params, old map[string]any, secret []string) map[string]any {
	for _, name := range secret {
		if v, ok := params[name]; ok && v == secrets.Mask {
			if prev, ok := old[name]; ok {
				params[name] = prev
			} else {
				delete(params, name)
			}
		}
	}
	return params
}

// saveTries bounds the reads of a schedule whose saves keep losing to its scheduler.
const saveTries = 8

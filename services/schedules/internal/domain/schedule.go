package domain

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/names"
)

// Type is how a schedule says when it fires.
type Type string

// Types: cron and advancedCron differ only in how a UI builds them; runOnce fires once, at
// its date.
const (
	TypeCron         Type = "cron"
	TypeAdvancedCron Type = "advancedCron"
	TypeRunOnce      Type = "runOnce"
)

// Types lists every type.
var Types = []Type{TypeCron, TypeAdvancedCron, TypeRunOnce}

// Status is a schedule's state.
type Status string

// Statuses: inactive is paused, keeping its next date; completed is a runOnce schedule
// after its fire; archived is read-only.
const (
	StatusActive    Status = "active"
	StatusInactive  Status = "inactive"
	StatusCompleted Status = "completed"
	StatusArchived  Status = "archived"
)

// Statuses lists every status.
var Statuses = []Status{StatusActive, StatusInactive, StatusCompleted, StatusArchived}

// OverlapPolicy is what a fire does while the schedule's previous run has not completed.
type OverlapPolicy string

// Overlap policies.
const (
	// OverlapAllow starts the run anyway.
	OverlapAllow OverlapPolicy = "allow"
	// OverlapSkip starts nothing.
	OverlapSkip OverlapPolicy = "skip"
	// OverlapBufferOne keeps the fire, at most one, and starts it when the previous run ends.
	OverlapBufferOne OverlapPolicy = "bufferOne"
	// OverlapCancelOther cancels the previous run, then starts the run.
	OverlapCancelOther OverlapPolicy = "cancelOther"
)

// MisfirePolicy is what the fires missed while no scheduler ran become.
type MisfirePolicy string

// Misfire policies.
const (
	// MisfireFireOnce makes one catch-up run, for the last fire missed.
	MisfireFireOnce MisfirePolicy = "fireOnce"
	// MisfireSkip makes none.
	MisfireSkip MisfirePolicy = "skip"
	// MisfireFireAll makes one run per fire missed within the catch-up window, oldest first.
	MisfireFireAll MisfirePolicy = "fireAll"
)

// OnTime is how late a fire may be and still count as on time rather than missed.
const OnTime = time.Minute

// MaxCatchUp bounds the fires one plan makes after downtime, whatever the window.
const MaxCatchUp = 1000

// maxPlanSteps bounds the fire times a plan walks through one by one.
const maxPlanSteps = 100_000

// Schedule is a team's schedule of one workflow.
type Schedule struct {
	ID, Team, Name, Description string
	// Workflow is the workflow's name in the team.
	Workflow string
	Type     Type
	Status   Status
	// TriggerDisabled is set while the workflow's schedule trigger is off: the schedule
	// keeps its dates but does not fire.
	TriggerDisabled bool
	Cron            string
	// Date is a runOnce schedule's fire time.
	Date     time.Time
	Timezone string
	Params   map[string]any
	Labels   map[string]string
	Overlap  OverlapPolicy
	Misfire  MisfirePolicy
	// CatchupWindow bounds how far back MisfireFireAll goes.
	CatchupWindow time.Duration
	// Next is the next planned fire; Last the last one made.
	Next, Last time.Time
	// Secret names the params that hold the workflow's password params: sealed at rest,
	// masked in every answer.
	Secret []string
	// CreatedBy is who made the schedule: its runs are started on their behalf.
	CreatedBy Initiator
	// LastRun is the run of the last fire submitted, which the overlap policy looks at.
	LastRun string
	// Pending are fires decided, oldest first, and not yet known to be submitted: a
	// replica that dies leaves them to the next, which submits them under the same keys.
	Pending []time.Time
	// Buffered is the fire a bufferOne schedule keeps while its previous run goes on;
	// Recheck is when the scheduler looks at that run again (and when it retries a fire
	// the runs service could not take).
	Buffered, Recheck time.Time
	Created           time.Time
	Version           int64
}

// Initiator is a principal as a schedule keeps it: type, id, display name, and the person
// answerable for it.
type Initiator struct{ Type, ID, Name, Person string }

// Due answers when a scheduler must next look at the schedule: its next fire, or sooner
// its recheck when one is set, else its first pending fire; zero when it has nothing to do.
// A recheck goes before the pending fires: they wait for it after a failed submit, rather
// than being tried again at once, and again.
func (s *Schedule) Due() time.Time {
	if !s.Fires() {
		return time.Time{}
	}
	sooner := s.Recheck
	if sooner.IsZero() && len(s.Pending) > 0 {
		sooner = s.Pending[0]
	}
	switch {
	case sooner.IsZero():
		return s.Next
	case s.Next.IsZero() || sooner.Before(s.Next):
		return sooner
	}
	return s.Next
}

// FieldError names a field of a schedule that cannot be taken, and why.
type FieldError struct{ Field, Message string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Normalize fills a schedule's defaults and checks it, answering the first field that
// cannot be taken.
func (s *Schedule) Normalize() error {
	s.Name = strings.TrimSpace(s.Name)
	if s.Name == "" {
		s.Name = s.Workflow
	}
	switch {
	case strings.TrimSpace(s.Workflow) == "":
		return &FieldError{"workflowRef", "is required"}
	case len(s.Name) > 256:
		return &FieldError{"name", "is at most 256 characters"}
	}
	if s.Type == "" {
		s.Type = TypeCron
	}
	if s.Status == "" {
		s.Status = StatusActive
	}
	if s.Overlap == "" {
		s.Overlap = OverlapAllow
	}
	if s.Misfire == "" {
		s.Misfire = MisfireFireOnce
	}
	switch s.Type {
	case TypeCron, TypeAdvancedCron, TypeRunOnce:
	default:
		return &FieldError{"type", fmt.Sprintf("%q is not one of cron, advancedCron, runOnce", s.Type)}
	}
	switch s.Status {
	case StatusActive, StatusInactive, StatusCompleted, StatusArchived:
	default:
		return &FieldError{"status", fmt.Sprintf("%q is not one of active, inactive, completed, archived", s.Status)}
	}
	switch s.Overlap {
	case OverlapAllow, OverlapSkip, OverlapBufferOne, OverlapCancelOther:
	default:
		return &FieldError{"overlapPolicy", fmt.Sprintf("%q is not one of allow, skip, bufferOne, cancelOther", s.Overlap)}
	}
	switch s.Misfire {
	case MisfireFireOnce, MisfireSkip, MisfireFireAll:
	default:
		return &FieldError{"misfirePolicy", fmt.Sprintf("%q is not one of fireOnce, skip, fireAll", s.Misfire)}
	}
	if err := s.checkLabels(); err != nil {
		return err
	}
	if s.CatchupWindow < 0 || s.CatchupWindow > 366*24*time.Hour {
		return &FieldError{"catchupWindow", "must be between 0 and 366 days"}
	}
	if _, err := LoadZone(s.Timezone); err != nil || s.Timezone == "" {
		return &FieldError{"timezone", "must be an IANA time zone, such as Europe/Paris"}
	}
	if s.Type == TypeRunOnce {
		if s.Date.IsZero() {
			return &FieldError{"dateSchedule", "is required for a runOnce schedule"}
		}
		return nil
	}
	if _, err := s.When(); err != nil {
		if errors.Is(err, ErrNeverFires) {
			// The expression is of the dialect; the request asks for what cannot be.
			return fmt.Errorf("%w: %w", &FieldError{"cronSchedule", err.Error()}, ErrNeverFires)
		}
		return &FieldError{"cronSchedule", err.Error()}
	}
	return nil
}

// checkLabels refuses the first label key, in name order, that names.CheckLabelKey
// refuses.
func (s *Schedule) checkLabels() error {
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		if err := names.CheckLabelKey(k); err != nil {
			return &FieldError{"labels", err.Error()}
		}
	}
	return nil
}

// When answers the schedule's cron expression in its zone; a runOnce schedule has none.
func (s *Schedule) When() (Cron, error) {
	loc, err := LoadZone(s.Timezone)
	if err != nil {
		return Cron{}, err
	}
	return ParseCron(s.Cron, loc)
}

// NextAfter answers the schedule's first fire strictly after t; zero when it has none.
func (s *Schedule) NextAfter(t time.Time) time.Time {
	if s.Type == TypeRunOnce {
		if s.Date.After(t) {
			return s.Date
		}
		return time.Time{}
	}
	c, err := s.When()
	if err != nil {
		return time.Time{}
	}
	return c.Next(t)
}

// Fires reports whether the schedule fires at all now: active, and its trigger on.
func (s *Schedule) Fires() bool { return s.Status == StatusActive && !s.TriggerDisabled }

// Plan answers the fires the schedule owes at now, oldest first, and its next planned fire
// after them. A fire late by OnTime or less is on time; older ones were missed (no
// scheduler ran), and become runs as the misfire policy says.
func (s *Schedule) Plan(now time.Time) (fires []time.Time, next time.Time) {
	fires, next, _ = s.PlanMissed(now)
	return fires, next
}

// PlanMissed is Plan, and also answers how many of the fires owed the misfire policy
// dropped (of the latest MaxCatchUp, the ones a plan looks at).
func (s *Schedule) PlanMissed(now time.Time) (fires []time.Time, next time.Time, dropped int) {
	var owed []time.Time
	at := s.Next
	for steps := 0; !at.IsZero() && !at.After(now); steps++ {
		owed = append(owed, at)
		if len(owed) > MaxCatchUp {
			owed = slices.Delete(owed, 0, 1) // only the latest are kept
		}
		if steps == maxPlanSteps {
			// Down for very long with frequent fires: leap to the fires that can still
			// count, keeping the last one seen as the latest missed.
			horizon := now.Add(-max(s.CatchupWindow, OnTime))
			if at.Before(horizon) {
				at = horizon
			}
		}
		at = s.NextAfter(at)
	}
	next = at
	if len(owed) == 0 {
		return nil, next, 0
	}
	var missed, onTime []time.Time
	for _, f := range owed {
		if now.Sub(f) <= OnTime {
			onTime = append(onTime, f)
		} else {
			missed = append(missed, f)
		}
	}
	switch s.Misfire {
	case MisfireFireAll:
		for _, f := range missed {
			if now.Sub(f) <= s.CatchupWindow {
				fires = append(fires, f)
			}
		}
	case MisfireFireOnce:
		if len(onTime) == 0 && len(missed) > 0 {
			fires = append(fires, missed[len(missed)-1])
		}
	}
	fires = append(fires, onTime...)
	return fires, next, len(owed) - len(fires)
}

// FireKey is the idempotency key of the schedule's fire at t: live fires, catch-up fires
// and backfills of one time make one run.
func FireKey(id string, t time.Time) string {
	return id + "@" + t.UTC().Format(time.RFC3339)
}

// ErrConflict is a write that lost to another writer: read again and decide anew.
var ErrConflict = errors.New("the schedule was changed meanwhile")

// Calendar bounds: a window of at most MaxCalendarWindow, at most MaxCalendarDates fires a
// schedule.
const (
	MaxCalendarWindow = 366 * 24 * time.Hour
	MaxCalendarDates  = 1000
)

// Calendar answers the schedule's fires in [from, to], at most MaxCalendarDates: every
// planned fire, whether or not the schedule is active now.
func (s *Schedule) Calendar(from, to time.Time) ([]time.Time, error) {
	switch {
	case to.Before(from):
		return nil, &FieldError{"toDate", "is before fromDate"}
	case to.Sub(from) > MaxCalendarWindow:
		return nil, &FieldError{"toDate", "the window is longer than 366 days"}
	}
	var out []time.Time
	for t := s.NextAfter(from.Add(-time.Nanosecond)); !t.IsZero() && !t.After(to) && len(out) < MaxCalendarDates; t = s.NextAfter(t) {
		out = append(out, t)
	}
	return out, nil
}

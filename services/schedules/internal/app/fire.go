package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// Runs is the runs service as schedules use it.
type Runs interface {
	// Submit starts the run of s's fire at, under the fire's key (domain.FireKey): a fire
	// submitted twice makes one run, whose id is answered both times; created is false
	// the second time.
	Submit(ctx context.Context, s *domain.Schedule, at time.Time) (run string, created bool, err error)
	// Completed reports whether run has ended; a run that is not there has.
	Completed(ctx context.Context, run string) (bool, error)
	// Cancel cancels run for reason; one that has ended is left as it is.
	Cancel(ctx context.Context, run, reason string) error
}

// Claims is how scheduler replicas share the schedules: a replica claims the schedules due
// soon for a while (a lease), and only the holder of a claim stores what their fires did.
type Claims interface {
	// ClaimDue claims for token, until until, at most limit schedules due by horizon whose
	// claims have lapsed at now, and answers them as stored.
	ClaimDue(ctx context.Context, token string, horizon, now, until time.Time, limit int) ([]*domain.Schedule, error)
	// Keep stores s as token's claim holder, moving s.Version: the claim is kept until until,
	// or let go when until is zero. It is domain.ErrConflict when the claim was lost (a
	// user's save, a workflow's change, another replica after it lapsed).
	Keep(ctx context.Context, s *domain.Schedule, token string, until time.Time) error
	// Holds reports whether token still holds its claim of schedule id.
	Holds(ctx context.Context, id, token string) (bool, error)
}

// Firer makes the runs that claimed schedules owe.
type Firer struct {
	Store Claims
	Runs  Runs
	Log   *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// RetryAfter is how long a fire the runs service could not take waits before it is
	// tried again (2s).
	RetryAfter time.Duration
	// RecheckAfter is how often a buffered fire looks at the run it waits for (30s); the
	// run's end, announced on the run topic, starts it sooner (Schedules.RunEnded).
	RecheckAfter time.Duration
	// Metrics records what fires did; nil records nothing.
	Metrics *FireMetrics
}

// Work does what schedule s, claimed by token, owes now: it plans the fires due (the
// misfire policy deciding on those missed), stores them as pending before submitting any
// (unless the plan is the one fire due now, see below), submits them oldest first as the
// overlap policy says, starts a buffered fire whose previous run has ended, and stores the
// schedule moved on. The claim is kept, until lease after the schedule's next due time,
// when that is by horizon, and let go otherwise; kept reports which. A replica that dies
// at any point leaves the pending fires to the next holder, which submits them again
// under the same keys: each fire makes one run. A claim lost meanwhile
// (domain.ErrConflict) leaves the schedule to its new writer.
//
// A plan of the one fire due now, on time, is not stored first: planned again from the
// same next fire by a holder that takes over, it comes out the same, under the same key,
// or, past OnTime, as the misfire policy says of a fire missed. Its claim is checked
// instead, so that a save made since (a pause) still keeps it from firing. That is one
// write a fire, not two, in the common case.
func (f *Firer) Work(ctx context.Context, s *domain.Schedule, token string, horizon time.Time, lease time.Duration) (kept bool, err error) {
	now := f.now()
	// What the fires did but make a run, recorded once the schedule moved on is stored: a
	// holder that loses its claim before leaves them to the next, which decides them again.
	var out fireOutcomes
	if s.Fires() && len(s.Pending) == 0 && !s.Next.IsZero() && !s.Next.After(now) {
		fires, next, dropped := s.PlanMissed(now)
		s.Pending, s.Next = fires, next
		out.add(FireMisfire, dropped)
		switch {
		case len(fires) == 0:
		case len(fires) == 1 && now.Sub(fires[0]) <= domain.OnTime:
			held, err := f.Store.Holds(ctx, s.ID, token)
			if err != nil {
				return false, err
			}
			if !held {
				return false, fmt.Errorf("fire schedule %s: %w", s.ID, domain.ErrConflict)
			}
		default:
			// Stored before any is submitted: a holder that dies in between leaves them owed.
			if err := f.Store.Keep(ctx, s, token, now.Add(lease)); err != nil {
				return false, err
			}
		}
	}
	s.Recheck = time.Time{}
	if s.Fires() {
		f.submitPending(ctx, s, now, &out)
		f.startBuffered(ctx, s, now)
	}
	if s.Type == domain.TypeRunOnce && s.Status == domain.StatusActive && s.Next.IsZero() &&
		len(s.Pending) == 0 && s.Buffered.IsZero() {
		s.Status = domain.StatusCompleted
	}
	until := time.Time{}
	if due := s.Due(); !due.IsZero() && !due.After(horizon) {
		until = due.Add(lease)
	}
	if err := f.Store.Keep(ctx, s, token, until); err != nil {
		return false, err
	}
	f.Metrics.record(out)
	return !until.IsZero(), nil
}

// submitPending submits s's pending fires in order; one the runs service cannot take now
// stays pending, with those after it, and is tried again after RetryAfter.
func (f *Firer) submitPending(ctx context.Context, s *domain.Schedule, now time.Time, out *fireOutcomes) {
	for len(s.Pending) > 0 {
		at := s.Pending[0]
		if err := f.fire(ctx, s, at, out); err != nil {
			if transient(err) {
				f.log().Warn("a schedule's fire could not be submitted; trying again", "schedule", s.ID, "fire", at, "error", err)
				s.Recheck = now.Add(f.retryAfter())
				return
			}
			f.log().Warn("a schedule's fire was refused; it makes no run", "schedule", s.ID, "fire", at, "error", err)
			out.add(FireRefused, 1)
		}
		s.Pending = s.Pending[1:]
		if at.After(s.Last) {
			s.Last = at
		}
	}
}

// fire makes the run of s's fire at as its overlap policy says, while its previous run
// goes on: started anyway, skipped, kept as the one buffered fire, or started once the
// previous one is cancelled.
func (f *Firer) fire(ctx context.Context, s *domain.Schedule, at time.Time, out *fireOutcomes) error {
	if s.Overlap != domain.OverlapAllow && s.LastRun != "" {
		done, err := f.Runs.Completed(ctx, s.LastRun)
		if err != nil {
			return err
		}
		if !done {
			switch s.Overlap {
			case domain.OverlapSkip:
				f.log().Debug("a schedule's fire is skipped: its previous run goes on", "schedule", s.ID, "fire", at, "run", s.LastRun)
				out.add(FireSkipped, 1)
				return nil
			case domain.OverlapBufferOne:
				if s.Buffered.IsZero() {
					s.Buffered = at
					out.add(FireBuffered, 1)
				} else {
					out.add(FireSkipped, 1) // one fire is buffered at most
				}
				return nil
			case domain.OverlapCancelOther:
				why := fmt.Sprintf("cancelled by schedule %s: it fired again at %s", s.Name, at.UTC().Format(time.RFC3339))
				if err := f.Runs.Cancel(ctx, s.LastRun, why); err != nil {
					return err
				}
			}
		}
	}
	return f.submit(ctx, s, at)
}

func (f *Firer) submit(ctx context.Context, s *domain.Schedule, at time.Time) error {
	run, created, err := f.Runs.Submit(ctx, s, at)
	if err != nil {
		return err
	}
	if created {
		// Counted by the runs service's answer: a fire submitted again after a crash or a
		// takeover makes no second run, and is not counted again.
		f.Metrics.made(at, f.now())
	}
	s.LastRun = run
	return nil
}

// startBuffered starts s's buffered fire once the run it waits for has ended; until then
// it looks again after RecheckAfter.
func (f *Firer) startBuffered(ctx context.Context, s *domain.Schedule, now time.Time) {
	if s.Buffered.IsZero() || len(s.Pending) > 0 {
		return
	}
	done, err := f.Runs.Completed(ctx, s.LastRun)
	if err == nil && done {
		err = f.submit(ctx, s, s.Buffered)
		if err == nil || !transient(err) {
			if err != nil {
				f.log().Warn("a schedule's buffered fire was refused; it makes no run", "schedule", s.ID, "fire", s.Buffered, "error", err)
			}
			s.Buffered = time.Time{}
			return
		}
	}
	if err != nil {
		f.log().Warn("a schedule's buffered fire waits: the runs service did not answer", "schedule", s.ID, "error", err)
		s.Recheck = now.Add(f.retryAfter())
		return
	}
	s.Recheck = now.Add(f.recheckAfter())
}

// transient reports whether a failed call may succeed later: the runs service did not
// answer, or failed, as opposed to refusing the run for a reason of the caller's (no such
// workflow, its trigger off, the team's quota used up).
func transient(err error) bool {
	if _, ok := apperr.As(err); !ok {
		return true
	}
	switch apperr.KindOf(err) {
	case apperr.KindInvalid, apperr.KindNotFound, apperr.KindForbidden, apperr.KindTooMany, apperr.KindUnprocessable:
		return false
	}
	return true
}

func (f *Firer) now() time.Time {
	if f.Now == nil {
		return time.Now()
	}
	return f.Now()
}

func (f *Firer) retryAfter() time.Duration {
	if f.RetryAfter <= 0 {
		return 2 * time.Second
	}
	return f.RetryAfter
}

func (f *Firer) recheckAfter() time.Duration {
	if f.RecheckAfter <= 0 {
		return 30 * time.Second
	}
	return f.RecheckAfter
}

func (f *Firer) log() *slog.Logger {
	if f.Log == nil {
		return slog.Default()
	}
	return f.Log
}

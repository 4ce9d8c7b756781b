package engine

import (
	"context"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Creation is a new run for Create.
type Creation struct {
	Run   *domain.Run
	Tasks []*domain.TaskRun
	// Rebuild makes Run and Tasks anew: a run started in memory that then finds no free
	// slot is stored queued as built anew, its first step undone.
	Rebuild func() (*domain.Run, []*domain.TaskRun, error)
	// Start asks for the run to start within the call when a slot is free; otherwise it
	// is stored queued and started soon.
	Start bool
	// MaxConcurrent is the team's concurrency limit.
	MaxConcurrent int
}

// Create stores a new run, started (c.Start and a slot free) or queued. seen is called
// with the run as stored, under its lock, before anything may move it on.
func (e *Engine) Create(ctx context.Context, c Creation, seen func(*domain.Run, []*domain.TaskRun)) (err error) {
	r, tasks := c.Run, c.Tasks
	ctx, span := startSubmit(ctx, e.tracer(), r)
	defer func() { endSpan(span, err) }()
	if c.Start {
		taken := 0
		if !r.SharesSlot {
			var err error
			if taken, err = e.slots.SlotsTaken(ctx, r.Team); err != nil {
				return err
			}
		}
		if r.SharesSlot || taken < c.MaxConcurrent {
			started, err := e.startNew(ctx, r, tasks, c.MaxConcurrent, seen)
			if err != nil || started {
				return err
			}
			if r, tasks, err = c.Rebuild(); err != nil {
				return err
			}
			keepTrace(ctx, r)
		}
	}
	r.Owner, r.Queued = e.cfg.Replica, true
	if err := e.runs.CreateRun(ctx, r, tasks); err != nil {
		return err
	}
	e.queued.mark(r.Team)
	// Seen before anything may start it: r and tasks stay this call's, the engine loads
	// its own copy.
	seen(r, tasks)
	if !c.Start {
		e.kickQueued(r.Team)
	}
	return nil
}

// startNew takes a new run's first step in memory, before the run is stored. A run that
// ends within it (inline tasks only) is written once, to the archive, and never holds a
// concurrency slot; one that goes on takes a slot first, unless it shares its tree's, and
// started is false when none is free (nothing is stored then).
func (e *Engine) startNew(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun, maxConcurrent int,
	seen func(*domain.Run, []*domain.TaskRun)) (started bool, err error) {
	r.Owner, r.Queued = e.cfg.Replica, false
	st, err := domain.NewState(r, tasks)
	if err != nil {
		return false, err
	}
	a := e.held.lock(r.ID)
	defer e.held.unlock(r.ID, a)
	m := domain.NewMachine(st, e.now())
	if err := m.Start(); err != nil {
		e.forget(r.ID)
		return false, PhaseError(err)
	}
	ended := r.Phase.Ended()
	slotted := !ended && !r.SharesSlot
	if slotted {
		slot, err := e.slots.AcquireSlot(ctx, r.Team, r.ID, maxConcurrent)
		if err != nil || !slot {
			e.forget(r.ID)
			return false, err
		}
	}
	// Once the run surely starts, and before its events and its wake: a claim on
	// dispatch moves its task on.
	claims := e.claimOnDispatch(m)
	r.WakeAt, a.idle = m.Wake(e.cfg.Lease)
	status := e.statusEvents(st, m)
	if ended {
		// Stored in the archive at once, with every event it owes (owed.go).
		e.putAwayOwed(st, r, tasks)
	}
	if err := e.runs.CreateRun(ctx, r, tasks); err != nil {
		if slotted {
			_ = e.slots.ReleaseSlot(ctx, r.Team, r.ID)
		}
		e.settleClaims(st, claims, false)
		e.forget(r.ID)
		return false, err
	}
	a.st = st
	e.metrics.stored(st, m, e.now())
	e.metrics.holds(st, !ended)
	e.metrics.sent(r.ID, status, e.now())
	e.effects(ctx, r.ID, st, m, status, claims)
	// Seen under the run's lock, before its next step can move it.
	seen(r, tasks)
	if ended {
		// Stored in the archive at once (CreateRun let go of its owner): nothing to put
		// away later.
		e.forget(r.ID)
	}
	e.park(r.ID, a)
	return true, nil
}

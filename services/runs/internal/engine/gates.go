package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/view"
)

// What gates owe once their step is stored: an action made or closed, a lock asked for,
// left or let go. Each is idempotent, so a recovery that asks again (domain's Recover)
// changes nothing that was done. Decisions, callbacks and grants come back as steps.

// errUnchanged ends an update that has nothing to store.
var errUnchanged = errors.New("unchanged")

// gateEffects carries out the gate effects of a stored step of st.
func (e *Engine) gateEffects(st *domain.State, eff domain.Effects) {
	now := e.now()
	for _, i := range eff.Actions {
		t := st.Tasks[i]
		if t.Status == domain.Waiting {
			a, err := st.NewAction(i, now)
			if err != nil {
				e.log.Error("cannot make action", "taskRun", t.ID, "error", err)
				continue
			}
			e.spawn(func(ctx context.Context) { e.createAction(ctx, a) })
			continue
		}
		id := domain.ActionID(t.ID, t.Attempt)
		status, reason, ok := st.ActionState(i, &domain.Action{ID: id})
		if ok {
			run := st.Run.ID
			e.spawn(func(ctx context.Context) { e.closeAction(ctx, run, id, status, reason) })
		}
	}
	team := st.Run.Team
	for _, i := range eff.Acquire {
		// Asked within the step, under the run's lock: waiters queue in the order their
		// steps were taken, so a run submitted later never overtakes one submitted before.
		key, w := st.LockWaiter(i, now)
		if e.queueFor(team, key, w) {
			e.spawn(func(ctx context.Context) { e.grant(ctx, domain.Grant{Team: team, Key: key, To: w}) })
		}
	}
	for _, i := range eff.Leave {
		key, w := st.LockWaiter(i, now)
		e.spawn(func(ctx context.Context) {
			if _, err := e.locks.UpdateLock(ctx, team, key, func(l *domain.Lock) error { l.Leave(w); return nil }); err != nil && ctx.Err() == nil {
				e.log.Warn("cannot leave a lock's queue", "run", w.Run, "lock", key, "error", err)
				e.owe(w.Run)
			}
		})
	}
	for _, i := range eff.Release {
		key, w := st.LockWaiter(i, now)
		e.spawn(func(ctx context.Context) { e.releaseTask(ctx, team, key, w) })
	}
}

// createAction stores a new action and announces it.
func (e *Engine) createAction(ctx context.Context, a *domain.Action) {
	if err := e.actions.CreateAction(ctx, a); err != nil {
		if ctx.Err() == nil {
			e.log.Warn("cannot store action", "action", a.ID, "error", err)
			e.owe(a.RunID)
		}
		return
	}
	e.announce(a)
}

// closeAction closes an action of run its task no longer waits on (a timeout), as status.
func (e *Engine) closeAction(ctx context.Context, run, id string, status domain.ActionStatus, reason string) {
	a, err := e.actions.UpdateAction(ctx, id, func(a *domain.Action) error {
		if !a.Close(status, reason, e.now()) && a.Applied {
			return errUnchanged
		}
		a.Applied = true
		return nil
	})
	switch {
	case errors.Is(err, errUnchanged), apperr.HasReason(err, apperr.ActionNotFound):
	case err != nil:
		if ctx.Err() == nil {
			e.log.Warn("cannot close action", "action", id, "error", err)
			e.owe(run)
		}
	default:
		e.announce(a)
	}
}

// actionEnd is how an action is closed once its task has ended.
type actionEnd struct {
	status domain.ActionStatus
	reason string
}

// actionEnds answers the actions a run that ended may have made, by id — one for each
// attempt its gate tasks began — and how each is closed if still open: as its task ended
// (a timeout may have approved it), or, with no status, cancelled.
func actionEnds(st *domain.State) map[string]actionEnd {
	out := map[string]actionEnd{}
	for i, t := range st.Tasks {
		if !domain.HasAction(t.Type) {
			continue
		}
		for attempt := 1; attempt <= t.Attempt; attempt++ {
			id := domain.ActionID(t.ID, attempt)
			end := actionEnd{}
			if attempt == t.Attempt {
				if status, reason, ok := st.ActionState(i, &domain.Action{ID: id}); ok {
					end = actionEnd{status, reason}
				}
			}
			out[id] = end
		}
	}
	return out
}

// closeRunActions closes the open actions of a run that ended, as ends says. It reads them
// by id, never by run: a search by run reads every action on the embedded database.
func (e *Engine) closeRunActions(ctx context.Context, run string, why domain.Status, ends map[string]actionEnd) error {
	ids := slices.Sorted(maps.Keys(ends))
	for _, id := range ids {
		a, err := e.actions.FindAction(ctx, id)
		if apperr.HasReason(err, apperr.ActionNotFound) {
			continue // its task began, but the step making it did not get that far
		}
		if err != nil {
			return err
		}
		if !a.Status.Open() {
			continue
		}
		end := ends[id]
		if end.status == "" {
			end = actionEnd{domain.ActionCancelled, "the run was " + string(why)}
		}
		e.closeAction(ctx, run, a.ID, end.status, end.reason)
	}
	return nil
}

// announce publishes an action's status event.
func (e *Engine) announce(a *domain.Action) {
	v := view.OfAction(a)
	ev, err := events.New(v.ID+"/"+string(a.Status), events.Source("runs"), events.TypeStatusAction,
		"/action/"+v.ID+"/status/"+string(a.Status), v)
	if err != nil {
		e.log.Error("cannot build an action event", "action", a.ID, "error", err)
		return
	}
	e.pub.enqueue([]Message{{Topic: events.RunEvents, Key: a.RunID, Event: ev}}, nil)
}

// ApplyDecision gives a decided action's outcome to its task, and marks the decision
// applied. Applying it twice changes nothing: the task takes one decision per attempt.
func (e *Engine) ApplyDecision(ctx context.Context, a *domain.Action) error {
	_, i, ok := domain.ParseTaskRunID(a.TaskRunID)
	if !ok {
		return fmt.Errorf("action %s names task run %q", a.ID, a.TaskRunID)
	}
	status, msg, results, secret := a.Outcome()
	err := e.Step(ctx, a.RunID, func(m *domain.Machine) error {
		if i >= len(m.S.Tasks) {
			return ErrNoChange
		}
		if !m.ActionDecided(i, a.Attempt, status, msg, results, secret) {
			// Decided on what is stored: a copy in memory may not show the task waiting.
			return ErrStale
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrNoChange) && !apperr.HasReason(err, apperr.WorkflowRunNotFound) {
		return err
	}
	// The task has its decision: the caller need not wait for the mark. Unmarked (a
	// crash), the reconciler applies the decision again, which changes nothing, and marks it.
	e.spawn(func(ctx context.Context) { e.markApplied(ctx, a) })
	return nil
}

// markApplied records that a's decision was given to its task, and announces it.
func (e *Engine) markApplied(ctx context.Context, a *domain.Action) {
	applied, err := e.actions.UpdateAction(ctx, a.ID, func(a *domain.Action) error {
		if a.Applied {
			return errUnchanged
		}
		a.Applied = true
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		if ctx.Err() == nil && !apperr.HasReason(err, apperr.ActionNotFound) {
			e.log.Warn("cannot mark a decision applied; the reconciler applies it again", "action", a.ID, "error", err)
		}
		return
	}
	if applied == nil {
		applied = a
	}
	e.announce(applied)
}

// queueFor asks for lock key of team for waiter w, and answers whether w holds it now.
func (e *Engine) queueFor(team, key string, w domain.Waiter) bool {
	<-e.ready
	ctx := e.bg
	var got bool
	if _, err := e.locks.UpdateLock(ctx, team, key, func(l *domain.Lock) error {
		got = l.Acquire(w)
		return nil
	}); err != nil {
		// The run's next load asks again (domain's Recover).
		if ctx.Err() == nil {
			e.log.Warn("cannot ask for a lock", "run", w.Run, "lock", key, "error", err)
			e.spawn(func(context.Context) { e.owe(w.Run) })
		}
		return false
	}
	return got
}

// grant tells a waiter's run that it holds the lock. A run that no longer wants it (its
// task stopped waiting, the run ended) lets it go at once, to the next waiter.
func (e *Engine) grant(ctx context.Context, g domain.Grant) {
	for range maxGrantHops {
		wanted := false
		err := e.Step(ctx, g.To.Run, func(m *domain.Machine) error {
			if g.To.Task >= len(m.S.Tasks) {
				return ErrNoChange
			}
			var changed bool
			wanted, changed = m.LockGranted(g.To.Task, g.To.Attempt)
			switch {
			case !wanted:
				// Decided on what is stored before the lock is let go: a copy in memory
				// may not show the task waiting yet.
				return ErrStale
			case !changed:
				return ErrNoChange
			}
			return nil
		})
		if err != nil && !errors.Is(err, ErrNoChange) && !apperr.HasReason(err, apperr.WorkflowRunNotFound) {
			if ctx.Err() == nil {
				e.log.Warn("cannot give a lock to its waiter", "run", g.To.Run, "lock", g.Key, "error", err)
			}
			return // the reconciler tells it again: the grant is stored untold
		}
		var next domain.Waiter
		var granted bool
		if _, err := e.locks.UpdateLock(ctx, g.Team, g.Key, func(l *domain.Lock) error {
			if !l.Holder.Is(g.To) {
				return errUnchanged
			}
			if wanted {
				if l.Notified {
					return errUnchanged
				}
				l.Notified = true
				return nil
			}
			next, granted = l.Release(g.To.Run)
			return nil
		}); err != nil && !errors.Is(err, errUnchanged) {
			if ctx.Err() == nil {
				e.log.Warn("cannot record a lock's grant", "lock", g.Key, "error", err)
			}
			return
		}
		if !granted {
			return
		}
		g.To = next
	}
	e.log.Warn("a lock passed through too many waiters that did not want it; the reconciler goes on", "lock", g.Key)
}

// maxGrantHops bounds how many waiters that no longer want a lock one grant passes it
// through before leaving the rest to the reconciler.
const maxGrantHops = 64

// releaseTask lets go of a lock for releaselock task w, then ends the task.
func (e *Engine) releaseTask(ctx context.Context, team, key string, w domain.Waiter) {
	held := false
	next, granted, err := e.release(ctx, team, key, w.Run, &held)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("cannot release a lock", "run", w.Run, "lock", key, "error", err)
			e.owe(w.Run)
		}
		return
	}
	if granted {
		// The next waiter goes on at once, beside the step ending this task (and often
		// this run): the lock is its as stored, whatever becomes of this run.
		e.spawn(func(ctx context.Context) { e.grant(ctx, domain.Grant{Team: team, Key: key, To: next}) })
	}
	if err := e.Step(ctx, w.Run, func(m *domain.Machine) error {
		if !m.LockReleased(w.Task, w.Attempt, held) {
			return ErrStale
		}
		return nil
	}); err != nil && ctx.Err() == nil {
		e.log.Warn("cannot end a releaselock task", "run", w.Run, "error", err)
	}
}

// release lets run go of lock key of team; held reports whether it held it.
func (e *Engine) release(ctx context.Context, team, key, run string, held *bool) (domain.Waiter, bool, error) {
	var next domain.Waiter
	var granted bool
	_, err := e.locks.UpdateLock(ctx, team, key, func(l *domain.Lock) error {
		*held = l.Holder.Run == run
		next, granted = l.Release(run)
		return nil
	})
	return next, granted, err
}

// releaseRunLocks lets a run that ended go of every lock it holds or waits for.
func (e *Engine) releaseRunLocks(ctx context.Context, run string) error {
	locks, err := e.locks.FindRunLocks(ctx, run)
	if err != nil {
		return err
	}
	var errs []error
	for _, l := range locks {
		var held bool
		next, granted, err := e.release(ctx, l.Team, l.Key, run, &held)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if granted {
			e.grant(ctx, domain.Grant{Team: l.Team, Key: l.Key, To: next})
		}
	}
	return errors.Join(errs...)
}

// reconcileGates applies what a crash left between two writes: decisions stored but not
// given to their task, and locks given to a waiter not yet told. Both are found by index,
// so this costs nothing while nothing is owed.
func (e *Engine) reconcileGates(ctx context.Context) {
	before := e.now().Add(-e.cfg.Reconcile)
	if list, err := e.actions.FindUnapplied(ctx, before); err == nil {
		for _, a := range list {
			err := e.ApplyDecision(ctx, a)
			if err == nil {
				e.metrics.repaired(repairDecision)
			} else if ctx.Err() == nil {
				e.log.Warn("cannot apply a decision", "action", a.ID, "error", err)
			}
		}
	} else if ctx.Err() == nil {
		e.log.Warn("cannot list decisions not applied", "error", err)
	}
	if locks, err := e.locks.FindUntold(ctx); err == nil {
		for _, l := range locks {
			e.grant(ctx, domain.Grant{Team: l.Team, Key: l.Key, To: l.Holder})
		}
	} else if ctx.Err() == nil {
		e.log.Warn("cannot list locks not told", "error", err)
	}
}

package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Cancel cancels a run that has not completed, and with it every run below it.
func (e *Engine) Cancel(ctx context.Context, id, why string) error {
	return e.Step(ctx, id, func(m *domain.Machine) error { return PhaseError(m.Cancel(why)) })
}

// startChild asks for the child run of runworkflow task i of run. A child that a limit
// forbids is never started: the task ends invalid. A child that its task no longer wants
// once it exists, or whose tree was stopped above it meanwhile, is cancelled here: the
// stop's own cascade read the runs in flight before this one was stored.
func (e *Engine) startChild(ctx context.Context, run string, i int) {
	var c ChildRequest
	var attempt int
	if err := e.Step(ctx, run, func(m *domain.Machine) error {
		t := m.S.Tasks[i]
		if t.Status != domain.Running || t.Child != "" {
			return ErrNoChange
		}
		attempt = t.Attempt
		var ok bool
		if c, ok = m.ChildRequest(i); !ok {
			return nil // the task failed: stored
		}
		return ErrNoChange
	}); err != nil && !errors.Is(err, ErrNoChange) {
		e.log.Warn("cannot start child run", "run", run, "error", err)
		return
	}
	if c.Workflow == "" {
		return
	}
	// A stop above the parent that this replica has not heard of yet: no child then, the
	// stop's cascade takes the parent. (The parent itself is checked by the steps, on
	// its stored state.)
	above := c.Ancestors[:len(c.Ancestors)-1]
	if stopped, err := e.stoppedAbove(ctx, above); stopped != "" {
		return
	} else if err != nil {
		// Going on is safe: the checks once the child exists, and the reconciler, find
		// the stop; stopping here would leave the parent waiting for nothing.
		e.log.Warn("cannot read the runs above a child run", "run", run, "error", err)
	}
	// fail is how the task ends when there is no child: invalid when a limit forbids
	// one, failed when submitting it failed.
	fail, failMsg := domain.Failed, ""
	child, err := startRetrying(ctx, childStartPauses, func() (string, error) { return e.starter.StartChild(ctx, c) })
	var refused *ChildRefused
	switch {
	case errors.As(err, &refused):
		fail, failMsg = domain.Invalid, refused.Reason
	case err != nil:
		failMsg = "cannot start the child run: " + errMessage(err)
	}
	wanted := true
	err2 := e.Step(ctx, run, func(m *domain.Machine) error {
		wanted = true
		if failMsg != "" {
			if m.S.Tasks[i].Attempt == attempt {
				m.Fail(i, fail, failMsg)
			}
			return nil
		}
		wanted = m.ChildStarted(i, attempt, child, c.Wait)
		return nil
	})
	if err2 != nil {
		// The parent's next load re-derives the start; the same key finds this child.
		e.log.Warn("cannot record child run", "run", run, "error", err2)
	}
	if failMsg != "" {
		return
	}
	if !wanted {
		e.cancelRun(ctx, child, "cancelled: its parent run "+run+" no longer waits for it")
		return
	}
	if stopped, err := e.stoppedAbove(ctx, above); err == nil && stopped != "" {
		e.cancelRun(ctx, child, "cancelled: run "+stopped+" above it was stopped")
		return
	}
	// The child may have ended before its parent recorded it, its news ignored then: read
	// it again now that the parent knows it.
	if cur, err := e.runs.FindRun(ctx, child); err == nil && cur.Phase.Ended() {
		if err := e.childEnded(ctx, run, c.ParentTask, cur); err != nil {
			e.log.Warn("cannot tell the parent run", "run", run, "child", cur.ID, "error", err)
		}
	}
}

// cancelRun cancels a run the engine no longer wants (a parent's cancel cascading, a child
// its task stopped waiting for); one that ended or is gone meanwhile is left as it is.
func (e *Engine) cancelRun(ctx context.Context, id, why string) bool {
	err := e.Cancel(ctx, id, why)
	if err != nil && !IsPhaseError(err) && !apperr.HasReason(err, apperr.WorkflowRunNotFound) && ctx.Err() == nil {
		e.log.Warn("cannot cancel run", "run", id, "error", err)
	}
	return err == nil
}

// cancelDescendants cancels the runs in flight below a run that stopped (Run.Stopped), at
// every depth at once: a tree still growing is not outrun level by level. A child created
// after the list was read finds the stop when it is recorded (startChild); one whose
// cancel a crash lost is found by the reconciler (cancelOrphans).
func (e *Engine) cancelDescendants(ctx context.Context, id string, why domain.Status) {
	ids, err := e.runs.FindDescendants(ctx, id)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("cannot list the runs below a stopped run", "run", id, "error", err)
		}
		return
	}
	for _, d := range ids {
		e.cancelRun(ctx, d, fmt.Sprintf("cancelled: run %s above it was %s", id, why))
	}
}

// stoppedAbove answers the first of ancestors that was stopped, if any.
func (e *Engine) stoppedAbove(ctx context.Context, ancestors []string) (string, error) {
	if len(ancestors) == 0 {
		return "", nil
	}
	stopped, err := e.runs.FindStopped(ctx, ancestors)
	if err != nil {
		return "", err
	}
	for _, a := range ancestors {
		if stopped[a] {
			return a, nil
		}
	}
	return "", nil
}

// childEnded gives a parent run's runworkflow task its child's end.
func (e *Engine) childEnded(ctx context.Context, parent, task string, child *domain.Run) error {
	results := map[string]string{}
	for k, v := range child.Results {
		results[k] = domain.Text(v)
	}
	err := e.Step(ctx, parent, func(m *domain.Machine) error {
		i, ok := m.S.G.Index[task]
		if !ok {
			return ErrNoChange
		}
		if !m.ChildEnded(i, child.ID, child.Status, results, child.SecretResults) {
			// Decided on what is stored: a copy in memory may not show the task waiting
			// for the child (another replica began it).
			return ErrStale
		}
		return nil
	})
	if errors.Is(err, ErrNoChange) || apperr.HasReason(err, apperr.WorkflowRunNotFound) {
		return nil
	}
	return err
}

func errMessage(err error) string {
	if ae, ok := apperr.As(err); ok {
		return ae.Message
	}
	return err.Error()
}

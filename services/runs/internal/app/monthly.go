package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
)

// HeldCountGrace is how long a run's monthly count stays held before the reconciler looks
// its run up: far longer than a submit takes between counting the run and storing it, so a
// count given back is one whose submit failed or died.
const HeldCountGrace = 5 * time.Minute

// reconcileEvery is how often the counts held past HeldCountGrace are looked at.
const reconcileEvery = time.Minute

// ReconcileMonthly settles the monthly counts held since before now less HeldCountGrace: a
// run stored keeps its count, one that is not gives it back (its submit failed or the
// process died between counting and storing it). It then writes what RunStored noted.
func (a *App) ReconcileMonthly(ctx context.Context, now time.Time) error {
	held, err := a.quotas.HeldMonthly(ctx, now.Add(-HeldCountGrace))
	if err != nil {
		return err
	}
	var errs []error
	for _, h := range held {
		_, err := a.runs.FindRun(ctx, h.Run)
		switch {
		case err == nil:
			errs = append(errs, a.quotas.RunStored(ctx, h.Team, h.Month, h.Run))
		case apperr.HasReason(err, apperr.WorkflowRunNotFound):
			if _, err := a.quotas.GiveBackMonthly(ctx, h.Team, h.Month, h.Run); err != nil {
				errs = append(errs, err)
			} else {
				a.log.Info("gave back the monthly count of a run never stored", "team", h.Team, "month", h.Month, "run", h.Run)
			}
		default:
			errs = append(errs, fmt.Errorf("look up counted run %s: %w", h.Run, err))
		}
	}
	return errors.Join(append(errs, a.quotas.SettleMonthly(ctx))...)
}

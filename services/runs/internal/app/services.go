package app

import (
	"context"
	"errors"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// RunState answers run id's status and phase, for Baton's own services.
func (a *App) RunState(ctx context.Context, id string) (status, phase string, err error) {
	r, err := a.runs.FindRun(ctx, id)
	if err != nil {
		return "", "", err
	}
	return string(r.Status), string(r.Phase), nil
}

// CancelRun cancels run id for reason on behalf of one of Baton's own services (a schedule
// cancelling its previous run). A run that has ended already is left as it is: the caller
// wanted it stopped, and it is.
func (a *App) CancelRun(ctx context.Context, id, reason string) (status, phase string, err error) {
	err = a.engine.Cancel(ctx, id, reason)
	var phaseErr *domain.ErrInvalidPhase
	if err != nil && !errors.As(err, &phaseErr) && !apperr.HasReason(err, apperr.WorkflowRunInvalidPhase) {
		return "", "", err
	}
	return a.RunState(ctx, id)
}

package app

import (
	"context"
	"errors"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/engine"
)

// Start starts a queued run of team now (PUT start), with req merged in first. It answers
// 429 when the team has no free slot: the run stays queued, req merged.
func (a *App) Start(ctx context.Context, team, id string, req domain.SubmitRequest) (RunView, error) {
	r, err := a.teamRun(ctx, team, id)
	if err != nil {
		return RunView{}, err
	}
	if r.Phase != domain.Queued {
		return RunView{}, engine.PhaseError(&domain.ErrInvalidPhase{Run: id, Phase: r.Phase, Status: r.Status})
	}
	started, err := a.engine.Start(ctx, id, team, &req)
	if err != nil {
		return RunView{}, err
	}
	if !started {
		tc, err := a.ctxs.get(ctx, team)
		if err != nil {
			return RunView{}, err
		}
		return RunView{}, apperr.New(apperr.QuotaExceeded, "Team '%s' runs %d runs at once already; the run stays queued.",
			team, tc.MaxConcurrent).WithRetryAfter(5 * time.Second)
	}
	return a.Get(ctx, id, true)
}

// Cancel cancels a run of team, for by.
func (a *App) Cancel(ctx context.Context, team, id, by string) (RunView, error) {
	if _, err := a.teamRun(ctx, team, id); err != nil {
		return RunView{}, err
	}
	if err := a.engine.Cancel(ctx, id, "cancelled by "+by); err != nil {
		return RunView{}, err
	}
	return a.Get(ctx, id, true)
}

// conflictRetries bounds how often a finalize decides again on a run that keeps changing.
const conflictRetries = 8

// Finalize moves a completed run of team to finalized.
func (a *App) Finalize(ctx context.Context, team, id string) (RunView, error) {
	for try := 0; ; try++ {
		r, err := a.teamRun(ctx, team, id)
		if err != nil {
			return RunView{}, err
		}
		if r.Phase != domain.Completed {
			return RunView{}, engine.PhaseError(&domain.ErrInvalidPhase{Run: id, Phase: r.Phase, Status: r.Status})
		}
		if r.Owner != "" {
			// Not yet put away: the move is a step like any other.
			err = a.engine.Step(ctx, id, func(m *domain.Machine) error { return engine.PhaseError(m.Finalize()) })
		} else {
			var done bool
			if done, err = a.runs.FinalizeArchived(ctx, id); err == nil && !done {
				err = engine.PhaseError(&domain.ErrInvalidPhase{Run: id, Phase: domain.Finalized, Status: r.Status})
			}
		}
		if errors.Is(err, domain.ErrConflict) {
			// A run that just ended is being put away in the archive while it is
			// finalized: decide again on what is stored now.
			if try < conflictRetries {
				continue
			}
			return RunView{}, apperr.Wrap(apperr.ConcurrentModification, err, "Workflow run '%s' changed while it was finalized; try again.", id)
		}
		if err != nil {
			return RunView{}, err
		}
		return a.Get(ctx, id, true)
	}
}

// Retry makes a new run of a run of team that did not succeed: from its failure, keeping
// what succeeded, or from the start.
func (a *App) Retry(ctx context.Context, team, id string, req domain.SubmitRequest, fromFailure bool, by domain.Initiator) (RunView, error) {
	if _, err := a.teamRun(ctx, team, id); err != nil {
		return RunView{}, err
	}
	r, tasks, tc, err := a.buildRetry(ctx, id, newRunID(), req, fromFailure, by)
	if err != nil {
		return RunView{}, err
	}
	// A retry asked for starts the run's automatic retries afresh.
	r.Retries = 0
	return a.createRetry(ctx, tc, r, tasks)
}

// buildRetry makes run newID, the retry of run id.
func (a *App) buildRetry(ctx context.Context, id, newID string, req domain.SubmitRequest, fromFailure bool, by domain.Initiator) (*domain.Run, []*domain.TaskRun, TeamContext, error) {
	old, err := a.runs.FindRun(ctx, id)
	if err == nil {
		old.Definition, err = a.runs.FindDefinition(ctx, old)
	}
	if err != nil {
		return nil, nil, TeamContext{}, err
	}
	oldTasks, err := a.runs.FindTaskRuns(ctx, old)
	if err != nil {
		return nil, nil, TeamContext{}, err
	}
	r, tasks, err := domain.NewRetry(newID, old, oldTasks, req, fromFailure, by, a.now())
	if err != nil {
		return nil, nil, TeamContext{}, engine.RequestError(engine.PhaseError(err))
	}
	tc, err := a.ctxs.get(ctx, r.Team)
	if err != nil {
		return nil, nil, TeamContext{}, err
	}
	return r, tasks, tc, nil
}

// createRetry stores a retry, queued: created queued, it is built once.
func (a *App) createRetry(ctx context.Context, tc TeamContext, r *domain.Run, tasks []*domain.TaskRun) (RunView, error) {
	return a.create(ctx, tc, false, false, func() (*domain.Run, []*domain.TaskRun, error) { return r, tasks, nil })
}

// teamRun reads a run and checks it belongs to team; another team's run is not found.
func (a *App) teamRun(ctx context.Context, team, id string) (*domain.Run, error) {
	r, err := a.runs.FindRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.Team != team {
		return nil, apperr.New(apperr.WorkflowRunNotFound, "Workflow run '%s' was not found.", id)
	}
	return r, nil
}

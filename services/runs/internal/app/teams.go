package app

import (
	"context"
	"fmt"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/engine"
)

// What the services deleting what runs belong to ask first: workflows before deleting a
// workflow, identity before deleting a team; and the removal of a deleted team's runs.

// ActiveRuns counts team's runs that are not completed, of workflow when it is not empty.
func (a *App) ActiveRuns(ctx context.Context, team, workflow string) (int, error) {
	ids, err := a.runs.FindUnfinished(ctx, team, workflow)
	return len(ids), err
}

// CancelActiveRuns cancels team's runs that are not completed, of workflow when it is not
// empty, saying why; it answers how many it cancelled. A run that completes meanwhile is
// left as it ended.
func (a *App) CancelActiveRuns(ctx context.Context, team, workflow, why string) (int, error) {
	ids, err := a.runs.FindUnfinished(ctx, team, workflow)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		err := a.engine.Cancel(ctx, id, why)
		switch {
		case err == nil:
			n++
		case engine.IsPhaseError(err) || apperr.HasReason(err, apperr.WorkflowRunNotFound):
		default:
			return n, err
		}
	}
	return n, nil
}

// DeleteTeam removes the runs of a team that was deleted, with its counters and keys:
// those not completed are cancelled first, and it fails, for its caller to try again,
// while any is still being put away.
func (a *App) DeleteTeam(ctx context.Context, team string) error {
	if _, err := a.CancelActiveRuns(ctx, team, "", "cancelled: team "+team+" was deleted"); err != nil {
		return err
	}
	busy, err := a.runs.HasLiveRuns(ctx, team)
	if err != nil {
		return err
	}
	if busy {
		return fmt.Errorf("delete the runs of team %s: some are still being put away", team)
	}
	if err := a.runs.DeleteTeamRuns(ctx, team); err != nil {
		return err
	}
	if err := a.quotas.DeleteTeamQuotas(ctx, team); err != nil {
		return err
	}
	if err := a.acts.DeleteTeamActions(ctx, team); err != nil {
		return err
	}
	if err := a.locks.DeleteTeamLocks(ctx, team); err != nil {
		return err
	}
	return a.keys.DeleteTeamKeys(ctx, team)
}

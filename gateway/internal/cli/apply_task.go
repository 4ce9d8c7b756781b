package cli

import (
	"context"

	"github.com/baton-flow/baton/libs/client"
)

// applyTask saves d, a Task (in team) or GlobalTask document, or with dryRun answers
// what would be saved: the tasks service writes nothing when the latest version holds
// the document already.
func (s *session) applyTask(ctx context.Context, d applyDoc, team string, dryRun bool) (*client.Task, bool, error) {
	switch {
	case d.kind == kindGlobalTask && dryRun:
		return s.client.DryRunGlobalTaskJSON(ctx, d.name, d.body)
	case d.kind == kindGlobalTask:
		return s.client.ApplyGlobalTaskJSON(ctx, d.name, d.body)
	case dryRun:
		return s.client.DryRunTeamTaskJSON(ctx, team, d.name, d.body)
	}
	return s.client.ApplyTeamTaskJSON(ctx, team, d.name, d.body)
}

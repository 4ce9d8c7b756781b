// Package eventsub turns the events the tasks service follows into use-case calls.
package eventsub

import (
	"context"
	"log/slog"
	"time"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/services/tasks/internal/app"
)

// TeamEvents handles the team topic: a deleted team's tasks go with it.
func TeamEvents(tasks *app.Tasks, log *slog.Logger) kafkax.Handler {
	return kafkax.OnTeamDeleted(func(ctx context.Context, d events.TeamDeleted, at time.Time) error {
		n, err := tasks.TeamDeleted(ctx, d.Name, at)
		if err != nil {
			return err
		}
		if n > 0 && log != nil {
			log.InfoContext(ctx, "removed the tasks of a deleted team", "team", d.Name, "tasks", n)
		}
		return nil
	})
}

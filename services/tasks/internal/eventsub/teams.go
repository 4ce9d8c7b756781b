// Package eventsub turns the events the tasks service follows into use-case calls.
package eventsub

import (
	"context"
	"log/slog"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/services/tasks/internal/app"
)

// TeamEvents handles the team topic: a deleted team's tasks go with it. Other types are
// skipped: producers may add types before consumers learn them.
func TeamEvents(tasks *app.Tasks, log *slog.Logger) kafkax.Handler {
	return func(ctx context.Context, e event.Event) error {
		if e.Type() != events.TypeTeamDeleted {
			return nil
		}
		d, err := events.Decode[events.TeamDeleted](e)
		if err != nil {
			return kafkax.Permanent(err)
		}
		n, err := tasks.TeamDeleted(ctx, d.Name, e.Time())
		if err != nil {
			return err
		}
		if n > 0 && log != nil {
			log.InfoContext(ctx, "removed the tasks of a deleted team", "team", d.Name, "tasks", n)
		}
		return nil
	}
}

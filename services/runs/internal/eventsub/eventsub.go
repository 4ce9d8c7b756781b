// Package eventsub turns the events the runs service follows into use-case calls: the
// runners' reports on their attempts, and teams being deleted.
package eventsub

import (
	"context"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
)

// Reports applies runners' reports (the task updates topic).
type Reports interface {
	Report(ctx context.Context, u events.TaskUpdate) error
}

// Teams removes a deleted team's runs.
type Teams interface {
	DeleteTeam(ctx context.Context, team string) error
}

// TaskUpdates handles the task updates topic.
func TaskUpdates(r Reports) kafkax.Handler {
	return func(ctx context.Context, e event.Event) error {
		u, err := events.Decode[events.TaskUpdate](e)
		if err != nil {
			return kafkax.Permanent(err)
		}
		return r.Report(ctx, u)
	}
}

// TeamEvents handles the team topic: a deleted team's runs are removed; other team events
// are not the runs service's.
func TeamEvents(t Teams) kafkax.Handler {
	return kafkax.OnTeamDeleted(func(ctx context.Context, d events.TeamDeleted, _ time.Time) error { return t.DeleteTeam(ctx, d.Name) })
}

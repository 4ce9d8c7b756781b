// Package eventsub turns the events the workflows service follows into use-case calls.
package eventsub

import (
	"context"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/services/workflows/internal/app"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// TeamEvents handles the team topic. Types it does not know are skipped: producers may
// add types before consumers learn them.
func TeamEvents(teams *app.Teams) kafkax.Handler {
	return func(ctx context.Context, e event.Event) error {
		switch e.Type() {
		case events.TypeTeamCreated:
			d, err := events.Decode[events.TeamCreated](e)
			if err != nil {
				return kafkax.Permanent(err)
			}
			return teams.TeamCreated(ctx, domain.Team{ID: d.ID, Name: d.Name, DisplayName: d.DisplayName, CreationDate: d.CreationDate})
		case events.TypeTeamDeleted:
			d, err := events.Decode[events.TeamDeleted](e)
			if err != nil {
				return kafkax.Permanent(err)
			}
			return teams.TeamDeleted(ctx, d.Name, d.ID)
		}
		return nil
	}
}

package kafkax

import (
	"context"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/baton-flow/baton/libs/events"
)

// OnTeamDeleted is the handler of the team topic for a service that only follows deleted
// teams: fn gets each TypeTeamDeleted's data and the time the team was deleted; other types
// are skipped (producers may add types before consumers learn them), and data that cannot
// be read is Permanent.
func OnTeamDeleted(fn func(ctx context.Context, team events.TeamDeleted, at time.Time) error) Handler {
	return func(ctx context.Context, e event.Event) error {
		if e.Type() != events.TypeTeamDeleted {
			return nil
		}
		d, err := events.Decode[events.TeamDeleted](e)
		if err != nil {
			return Permanent(err)
		}
		return fn(ctx, d, e.Time())
	}
}

// Package eventsub turns the events the runs service follows into use-case calls: the
// runners' reports on their attempts, teams being deleted, and runs' status events
// recorded downstream.
package eventsub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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

// Recorder takes in which of a run's status events are recorded downstream.
type Recorder interface {
	Recorded(run string, seqs []int64)
}

// StatusRecorded handles the topic of recorded status events.
func StatusRecorded(r Recorder) kafkax.Handler {
	return func(_ context.Context, e event.Event) error {
		d, err := events.Decode[events.StatusRecorded](e)
		if err != nil || d.Run == "" {
			return kafkax.Permanent(fmt.Errorf("recorded status events: %w", cmp.Or(err, errors.New("no run"))))
		}
		r.Recorded(d.Run, d.Seqs)
		return nil
	}
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

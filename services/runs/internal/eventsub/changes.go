package eventsub

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
)

// Changes takes in that a run changed, for those watching it or its team; team tells
// the run's team when asked, "" when the event does not say it.
type Changes interface {
	ChangedIn(run string, team func() string)
}

// ChangeTypes are the event types of the run events topic that say a run changed.
var ChangeTypes = []string{events.TypeStatusWorkflowRun, events.TypeStatusTaskRun, events.TypeStatusAction}

// RunChanges handles the run events topic for the watch streams: each status event of a
// run, of one of its task runs or of one of its actions says the run changed.
func RunChanges(c Changes) kafkax.Handler {
	return func(_ context.Context, e event.Event) error {
		if run := changedRun(e); run != "" {
			c.ChangedIn(run, func() string { return teamOf(e) })
		}
		return nil
	}
}

// teamOf answers the team a run's or an action's status event names, "" for a task run's
// (whose data does not say it).
func teamOf(e event.Event) string {
	if e.Type() == events.TypeStatusTaskRun {
		return ""
	}
	var d struct {
		Team string `json:"team"`
	}
	if err := json.Unmarshal(e.Data(), &d); err != nil {
		return ""
	}
	return d.Team
}

// changedRun answers the run an event is about, "" when it names none.
func changedRun(e event.Event) string {
	switch e.Type() {
	case events.TypeStatusWorkflowRun, events.TypeStatusTaskRun:
		// "/workflowrun/<id>/status/<s>" or "/workflowrun/<id>/taskrun/<t>/status/<s>"
		rest, ok := strings.CutPrefix(e.Subject(), "/workflowrun/")
		if !ok {
			return ""
		}
		run, _, _ := strings.Cut(rest, "/")
		return run
	case events.TypeStatusAction:
		var a struct {
			Run string `json:"workflowRunRef"`
		}
		if err := json.Unmarshal(e.Data(), &a); err != nil {
			return ""
		}
		return a.Run
	}
	return ""
}

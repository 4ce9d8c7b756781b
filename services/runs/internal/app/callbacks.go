package app

import (
	"context"

	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/engine"
)

// CallbackRun is what authorizing a callback needs of its run.
type CallbackRun struct {
	Team, Workflow string
	Ended          bool
}

// FindCallbackRun reads the run a callback names.
func (a *App) FindCallbackRun(ctx context.Context, id string) (CallbackRun, error) {
	r, err := a.runs.FindRun(ctx, id)
	if err != nil {
		return CallbackRun{}, err
	}
	return CallbackRun{Team: r.Team, Workflow: r.Workflow, Ended: r.Phase.Ended()}, nil
}

// Callback applies a wait-for-event callback on topic to run id: its eventwait tasks
// waiting for the topic end with status and data (the POST body, JSON text), or the run
// keeps the callback for such a task that starts later. A run that has ended refuses it.
func (a *App) Callback(ctx context.Context, id, topic string, status domain.Status, data string) error {
	return a.engine.Step(ctx, id, func(m *domain.Machine) error {
		return engine.RequestError(engine.PhaseError(m.CallbackArrived(topic, status, data)))
	})
}

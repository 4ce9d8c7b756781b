// Package catalogue resolves the task references of workflows against the tasks
// service's catalogue (libs/tasksapi), for the app's TaskResolver port.
package catalogue

import (
	"context"

	"github.com/baton-flow/baton/libs/tasksapi"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// Tasks implements app.TaskResolver with the tasks service.
type Tasks struct{ c *tasksapi.Client }

// New returns the resolver asking through c.
func New(c *tasksapi.Client) *Tasks { return &Tasks{c: c} }

// ResolveTask implements app.TaskResolver: a task or version the catalogue lacks is an
// error of reason TASK_NOT_FOUND, a tasks service that does not answer (or lacks the
// endpoint) one of reason DEPENDENCY_UNAVAILABLE.
func (t *Tasks) ResolveTask(ctx context.Context, ref string, version int) (domain.TaskDefinition, error) {
	task, err := t.c.Resolve(ctx, ref, version)
	if err != nil {
		return domain.TaskDefinition{}, err
	}
	def := domain.TaskDefinition{Name: task.Name, Version: task.Version, Status: task.Status, Type: task.Type,
		Params: task.Spec.Params}
	for _, r := range task.Spec.Results {
		def.Results = append(def.Results, r.Name)
	}
	if def.Version < 1 {
		def.Version = version
	}
	return def, nil
}

package app

import (
	"context"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// The queries below answer Baton's own services, which reach them only through the
// internal routes (service principals), so they authorize nothing themselves.

// WorkflowCount is how many workflows the team has: its quota usage, for identity.
func (s *Workflows) WorkflowCount(ctx context.Context, team string) (int, error) {
	t, err := s.teams.FindTeamByName(ctx, team)
	if err != nil {
		return 0, err
	}
	cat, err := s.defs.store.Catalog(ctx, namespace(t))
	if err != nil {
		return 0, err
	}
	return cat.Len(), nil
}

// TaskUsage names the workflows of team whose latest version uses the catalogue task ref
// (`<name>` for a global task, `<team>/<name>` for a team task), for the tasks service,
// which refuses to delete a task in use.
func (s *Workflows) TaskUsage(ctx context.Context, team, ref string) ([]string, error) {
	t, err := s.teams.FindTeamByName(ctx, team)
	if apperr.HasReason(err, apperr.TeamNotFound) {
		// A team this service never heard of has no workflows to use the task.
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	ns := namespace(t)
	cat, err := s.defs.store.Catalog(ctx, ns)
	if err != nil {
		return nil, err
	}
	users := []string{}
	for _, e := range cat.Entries() {
		w, _, err := s.defs.get(ctx, ns, e.Name, 0, domain.LoadTasks)
		if err != nil {
			return nil, err
		}
		for _, task := range w.Tasks {
			if task.TaskRef == ref {
				users = append(users, e.Name)
				break
			}
		}
	}
	return users, nil
}

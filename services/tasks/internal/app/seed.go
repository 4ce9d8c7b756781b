package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
	"github.com/baton-flow/baton/services/tasks/internal/tekton"
)

// Seed creates the catalogue's global tasks that do not exist yet. It never touches a task
// that exists, so what admins changed (or deactivated) stays, and replicas starting
// together create each task once.
func (s *Tasks) Seed(ctx context.Context) (created int, err error) {
	seeder := auth.Principal{Type: auth.TypeService, ID: domain.CatalogueAuthor, Name: domain.CatalogueAuthor}
	for _, t := range domain.Catalogue() {
		t.Normalize()
		if errs := t.Validate(); len(errs) > 0 {
			return created, fmt.Errorf("catalogue task %s: %w", t.Name, domain.Invalid(errs))
		}
		t.Changelog.Reason = "Baton's catalogue"
		_, err := s.create(ctx, seeder, t)
		switch {
		case errors.Is(err, domain.ErrTaskAlreadyExists):
		case err != nil:
			return created, fmt.Errorf("seed task %s: %w", t.Name, err)
		default:
			created++
		}
	}
	return created, nil
}

// Validate checks a Tekton YAML body as a task definition of ref's scope (ref.Name is not
// used): nil when it would be accepted, else TASK_INVALID listing every problem.
func (s *Tasks) Validate(ctx context.Context, ref domain.Ref, body []byte) error {
	if _, err := authorize(ctx, ref, "read"); err != nil {
		return err
	}
	problems, err := tekton.Validate(body)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return domain.Invalid(problems)
	}
	return nil
}

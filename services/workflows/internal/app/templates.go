package app

import (
	"context"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// templateResource is the permission resource of workflow templates.
const templateResource = "workflowtemplate"

// templates is the namespace of the global templates.
var templates = domain.Namespace{}

// Templates is the workflow template use cases. Templates are global: any authenticated
// principal reads them (to start workflows from); writing needs `workflowtemplate/write`
// and deleting `workflowtemplate/delete` instance-wide.
type Templates struct {
	defs *definitions
}

// NewTemplates returns the template use cases over store.
func NewTemplates(store DefinitionStore, tasks TaskResolver, now func() time.Time) *Templates {
	if now == nil {
		now = time.Now
	}
	return &Templates{defs: &definitions{store: store, tasks: tasks, now: now, kind: kindTemplate}}
}

func authenticated(ctx context.Context) (auth.Principal, error) {
	p, ok := auth.FromContext(ctx)
	if !ok || p.Type == auth.TypeAnonymous {
		return auth.Principal{}, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	return p, nil
}

// Create creates a template (POST).
func (s *Templates) Create(ctx context.Context, body domain.Workflow) (domain.Workflow, error) {
	name, err := domain.NewName(body.Name)
	if err != nil {
		return domain.Workflow{}, err
	}
	w, _, err := s.save(ctx, name, body, modeCreate, false)
	return w, err
}

// Put saves body as a new version of its template, or over the latest with m.Replace;
// either creates the template when it does not exist. m.DryRun saves nothing.
func (s *Templates) Put(ctx context.Context, body domain.Workflow, m PutMode) (domain.Workflow, bool, error) {
	name, err := domain.NewName(body.Name)
	if err != nil {
		return domain.Workflow{}, false, err
	}
	return s.save(ctx, name, body, putMode(m.Replace), m.DryRun)
}

func (s *Templates) save(ctx context.Context, name string, body domain.Workflow, mode saveMode, dryRun bool) (domain.Workflow, bool, error) {
	p, err := auth.Require(ctx, auth.Scope{}, templateResource, "write")
	if err != nil {
		return domain.Workflow{}, false, err
	}
	w := body
	w.Name = name
	// A template has no team: a team field (an exported workflow posted as a template)
	// is read-only and dropped like the other read-only fields.
	w.Team = ""
	if err := s.defs.validate(ctx, &w, domain.ValidateOptions{}); err != nil {
		return domain.Workflow{}, false, err
	}
	out, sv, err := s.defs.save(ctx, saveRequest{
		ns: templates, def: w, mode: mode, dryRun: dryRun,
		changelog: domain.Changelog{Author: authorName(p), Reason: changelogReason(body)},
	})
	return out, sv.Created, err
}

// Get reads version (0: the latest) of a template, without its tasks unless withTasks.
func (s *Templates) Get(ctx context.Context, name string, version int, withTasks bool) (domain.Workflow, error) {
	if _, err := authenticated(ctx); err != nil {
		return domain.Workflow{}, err
	}
	w, _, err := s.defs.get(ctx, templates, name, version, rendering(withTasks))
	return w, err
}

// Delete deletes a template. Workflows made from it are copies and stay.
func (s *Templates) Delete(ctx context.Context, name string) error {
	if _, err := auth.Require(ctx, auth.Scope{}, templateResource, "delete"); err != nil {
		return err
	}
	_, err := s.defs.remove(ctx, templates, name, nil)
	return err
}

// Query returns a page of templates (latest versions, without tasks).
func (s *Templates) Query(ctx context.Context, f domain.Filter, p page.Request) (page.Page[domain.Workflow], error) {
	if _, err := authenticated(ctx); err != nil {
		return page.Page[domain.Workflow]{}, err
	}
	return s.defs.query(ctx, templates, f, p)
}

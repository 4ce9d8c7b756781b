// Package peers calls the services the runs service depends on, over HTTP through
// discovery, as the runs service: workflows for the version a run runs, tasks for catalogue
// specs, identity for a team's run context.
package peers

import (
	"context"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Self is the principal the runs service acts as.
var Self = auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}

// timeout bounds one call.
const timeout = 10 * time.Second

// Workflows reads workflow versions from the workflows service.
type Workflows struct{ c *peer.Client }

// NewWorkflows returns the client of service "workflows".
func NewWorkflows(r registry.Resolver, s *auth.Signer) *Workflows {
	return &Workflows{c: peer.New("workflows", r, s, timeout)}
}

// Snapshot implements app.Definitions with
// GET /internal/v1/teams/{team}/workflows/{name}?version=n.
func (w *Workflows) Snapshot(ctx context.Context, team, workflow string, version int) (*domain.Definition, error) {
	q := url.Values{}
	if version > 0 {
		q.Set("version", strconv.Itoa(version))
	}
	var def domain.Definition
	err := w.c.Get(ctx, Self, "/internal/v1/teams/"+url.PathEscape(team)+"/workflows/"+url.PathEscape(workflow), q, &def)
	if err != nil {
		return nil, err
	}
	return &def, nil
}

// Tasks reads catalogue tasks from the tasks service; versions never change, so each is
// read once.
type Tasks struct {
	c     *peer.Client
	mu    sync.Mutex
	cache map[string]taskAnswer
}

type taskAnswer struct {
	Version int         `json:"version"`
	Spec    domain.Spec `json:"spec"`
}

// NewTasks returns the client of service "tasks".
func NewTasks(r registry.Resolver, s *auth.Signer) *Tasks {
	return &Tasks{c: peer.New("tasks", r, s, timeout), cache: map[string]taskAnswer{}}
}

// TaskSpec implements app.Catalogue with GET /internal/v1/tasks/resolve?ref=&version=.
func (t *Tasks) TaskSpec(ctx context.Context, ref string, version int) (*domain.Spec, int, error) {
	key := ref + "@" + strconv.Itoa(version)
	t.mu.Lock()
	a, ok := t.cache[key]
	t.mu.Unlock()
	if !ok {
		q := url.Values{"ref": {ref}}
		if version > 0 {
			q.Set("version", strconv.Itoa(version))
		}
		if err := t.c.Get(ctx, Self, "/internal/v1/tasks/resolve", q, &a); err != nil {
			return nil, 0, err
		}
		if version > 0 {
			t.mu.Lock()
			t.cache[key] = a
			t.mu.Unlock()
		}
	}
	spec := a.Spec
	return &spec, a.Version, nil
}

// Identity reads teams' run contexts from identity.
type Identity struct{ c *peer.Client }

// NewIdentity returns the client of service "identity".
func NewIdentity(r registry.Resolver, s *auth.Signer) *Identity {
	return &Identity{c: peer.New("identity", r, s, timeout)}
}

// RunContext implements app.Contexts with GET /internal/v1/teams/{team}/run-context.
func (i *Identity) RunContext(ctx context.Context, team string) (app.TeamContext, error) {
	var a struct {
		GlobalParams map[string]any `json:"globalParams"`
		TeamParams   map[string]any `json:"teamParams"`
		Secrets      []string       `json:"secrets"`
		Quotas       struct {
			MaxWorkflowRunMonthly  int `json:"maxWorkflowRunMonthly"`
			MaxWorkflowRunDuration int `json:"maxWorkflowRunDuration"`
			MaxConcurrentRuns      int `json:"maxConcurrentRuns"`
		} `json:"quotas"`
		TaskDefaultTimeout int `json:"taskDefaultTimeout"`
		MaxDepth           int `json:"maxDepth"`
		MaxTreeRuns        int `json:"maxTreeRuns"`
	}
	if err := i.c.Get(ctx, Self, "/internal/v1/teams/"+url.PathEscape(team)+"/run-context", nil, &a); err != nil {
		return app.TeamContext{}, err
	}
	return app.TeamContext{
		Global: a.GlobalParams, Team: a.TeamParams, Secrets: a.Secrets,
		MaxMonthly: a.Quotas.MaxWorkflowRunMonthly, MaxDuration: a.Quotas.MaxWorkflowRunDuration,
		MaxConcurrent: a.Quotas.MaxConcurrentRuns, TaskDefaultTimeout: a.TaskDefaultTimeout, MaxDepth: a.MaxDepth,
		MaxTreeRuns: a.MaxTreeRuns,
	}, nil
}

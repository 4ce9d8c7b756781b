// Package peers calls the other Baton services the workflows service depends on, over HTTP
// through discovery, with a signed principal: the tasks service to resolve task
// references, identity for the parameter names available to tasks.
package peers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// Self is the principal the workflows service acts as on its own behalf.
var Self = auth.Principal{Type: auth.TypeService, ID: "workflows", Name: "workflows"}

// timeout bounds one call; a save waits on task resolution, so a stuck peer must not hold
// it for long.
const timeout = 5 * time.Second

// Tasks resolves task references with the tasks service's internal endpoint
//
//	GET /internal/v1/tasks/resolve?ref=<name>|<team>/<name>&version=<n>
//	  200 the task version: {name, version, status, type, spec{params, results, …}}
//	  404 no such task or version
//
// version is left out for the latest.
type Tasks struct{ c *peer.Client }

// NewTasks returns the client of service "tasks".
func NewTasks(resolver registry.Resolver, signer *auth.Signer) *Tasks {
	return &Tasks{c: peer.New("tasks", resolver, signer, timeout)}
}

// taskJSON is the part of a task the workflows service reads.
type taskJSON struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	Status  string `json:"status"`
	Type    string `json:"type"`
	Spec    struct {
		Params  []domain.Param `json:"params"`
		Results []struct {
			Name string `json:"name"`
		} `json:"results"`
	} `json:"spec"`
}

// ResolveTask implements app.TaskResolver.
func (t *Tasks) ResolveTask(ctx context.Context, ref string, version int) (domain.TaskDefinition, error) {
	q := url.Values{"ref": {ref}}
	if version > 0 {
		q.Set("version", fmt.Sprint(version))
	}
	var task taskJSON
	a, err := t.c.Call(ctx, Self, http.MethodGet, "/internal/v1/tasks/resolve", q, nil, &task)
	switch {
	case err != nil:
		return domain.TaskDefinition{}, err
	// A 404 for the route itself (a tasks service without the endpoint) is not a task
	// the catalogue lacks: saving must not blame the workflow for it.
	case a.Status == http.StatusNotFound && a.Reason != apperr.RouteNotFound.Name:
		return domain.TaskDefinition{}, apperr.New(apperr.TaskNotFound, "Task '%s' was not found.", ref)
	case a.Status != http.StatusOK:
		return domain.TaskDefinition{}, t.c.Unavailable(fmt.Errorf("resolve task %s: status %d %s", ref, a.Status, a.Reason))
	}
	def := domain.TaskDefinition{Name: task.Name, Version: task.Version, Status: task.Status, Type: task.Type, Params: task.Spec.Params}
	for _, r := range task.Spec.Results {
		def.Results = append(def.Results, r.Name)
	}
	if def.Version < 1 {
		def.Version = version
	}
	return def, nil
}

// Params lists global and team parameter names through identity's public API, as the
// caller of the context: it sees the parameters the caller may see.
type Params struct{ c *peer.Client }

// NewParams returns the client of service "identity".
func NewParams(resolver registry.Resolver, signer *auth.Signer) *Params {
	return &Params{c: peer.New("identity", resolver, signer, timeout)}
}

type namedJSON struct {
	Name string `json:"name"`
}

func (p *Params) principal(ctx context.Context) auth.Principal {
	if caller, ok := auth.FromContext(ctx); ok {
		return caller
	}
	return Self
}

// GlobalParams implements app.ParamSource.
func (p *Params) GlobalParams(ctx context.Context) ([]string, error) {
	var params []namedJSON
	a, err := p.c.Call(ctx, p.principal(ctx), http.MethodGet, "/api/v2/parameters", nil, nil, &params)
	if err != nil {
		return nil, err
	}
	if a.Status != http.StatusOK {
		return nil, p.c.Unavailable(fmt.Errorf("list global parameters: status %d %s", a.Status, a.Reason))
	}
	return names(params), nil
}

// TeamParams implements app.ParamSource.
func (p *Params) TeamParams(ctx context.Context, team string) ([]string, error) {
	var body struct {
		Parameters []namedJSON `json:"parameters"`
	}
	a, err := p.c.Call(ctx, p.principal(ctx), http.MethodGet, "/api/v2/team/"+url.PathEscape(team), nil, nil, &body)
	if err != nil {
		return nil, err
	}
	if a.Status != http.StatusOK {
		return nil, p.c.Unavailable(fmt.Errorf("read team %s: status %d %s", team, a.Status, a.Reason))
	}
	return names(body.Parameters), nil
}

func names(items []namedJSON) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.Name)
	}
	return out
}

// Quotas reads a team's workflow-count limit from identity, which owns quotas: the team's
// own override or the instance default, as `GET /api/v2/team/{team}` shows them. Answers
// are kept for a few seconds, since every create asks.
type Quotas struct {
	c   *peer.Client
	ttl time.Duration
	now func() time.Time

	mu     sync.Mutex
	limits map[string]quotaEntry
}

type quotaEntry struct {
	max int
	at  time.Time
}

// NewQuotas returns the client of service "identity" for quotas.
func NewQuotas(resolver registry.Resolver, signer *auth.Signer) *Quotas {
	return &Quotas{c: peer.New("identity", resolver, signer, timeout), ttl: 5 * time.Second, now: time.Now, limits: map[string]quotaEntry{}}
}

// MaxWorkflowCount returns the team's limit.
func (q *Quotas) MaxWorkflowCount(ctx context.Context, team string) (int, error) {
	q.mu.Lock()
	e, ok := q.limits[team]
	q.mu.Unlock()
	if ok && q.now().Sub(e.at) < q.ttl {
		return e.max, nil
	}
	var body struct {
		Quotas struct {
			MaxWorkflowCount *int `json:"maxWorkflowCount"`
		} `json:"quotas"`
	}
	ans, err := q.c.Call(ctx, Self, http.MethodGet, "/api/v2/team/"+url.PathEscape(team), nil, nil, &body)
	if err != nil {
		return 0, err
	}
	switch {
	case ans.Status == http.StatusNotFound:
		return 0, apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", team)
	case ans.Status != http.StatusOK:
		return 0, q.c.Unavailable(fmt.Errorf("team %s: status %d %s", team, ans.Status, ans.Reason))
	case body.Quotas.MaxWorkflowCount == nil:
		return 0, q.c.Unavailable(fmt.Errorf("team %s: no maxWorkflowCount in identity's answer", team))
	}
	q.mu.Lock()
	q.limits[team] = quotaEntry{max: *body.Quotas.MaxWorkflowCount, at: q.now()}
	q.mu.Unlock()
	return *body.Quotas.MaxWorkflowCount, nil
}

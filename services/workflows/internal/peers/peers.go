// Package peers calls the other Baton services the workflows service depends on, over HTTP
// through discovery, with a signed principal: the tasks service to resolve task
// references, identity for the parameter names available to tasks.
package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// Self is the principal the workflows service acts as on its own behalf.
var Self = auth.Principal{Type: auth.TypeService, ID: "workflows", Name: "workflows"}

// timeout bounds one call; a save waits on task resolution, so a stuck peer must not hold
// it for long.
const timeout = 5 * time.Second

// caller sends signed GET requests to the instances of one service, in turn.
type caller struct {
	service  string
	resolver registry.Resolver
	signer   *auth.Signer
	client   *http.Client
	next     atomic.Uint64
}

func newCaller(service string, resolver registry.Resolver, signer *auth.Signer) *caller {
	return &caller{service: service, resolver: resolver, signer: signer, client: &http.Client{Timeout: timeout}}
}

func (c *caller) unavailable(err error) error {
	return apperr.Wrap(apperr.DependencyUnavailable, err, "The %s service is unavailable; try again.", c.service)
}

// answer is the status of a call other than 200, with the reason of its error body.
type answer struct {
	status int
	reason string
}

// get calls path (with query) as p and decodes a 200 answer into out. It returns the
// status and reason of any other answer, and an Unavailable error when no instance answers.
func (c *caller) get(ctx context.Context, p auth.Principal, path string, query url.Values, out any) (answer, error) {
	urls, err := c.resolver.Resolve(ctx, c.service)
	if err != nil {
		return answer{}, c.unavailable(err)
	}
	base := urls[int(c.next.Add(1)%uint64(len(urls)))]
	u := base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return answer{}, fmt.Errorf("request %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json")
	if err := c.signer.SetHeaders(p, req.Header.Set); err != nil {
		return answer{}, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return answer{}, c.unavailable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var body struct {
			Reason string `json:"reason"`
		}
		_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body)
		return answer{status: resp.StatusCode, reason: body.Reason}, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return answer{}, c.unavailable(fmt.Errorf("decode %s answer: %w", c.service, err))
	}
	return answer{status: http.StatusOK}, nil
}

// Tasks resolves task references with the tasks service's internal endpoint
//
//	GET /internal/v1/tasks/resolve?ref=<name>|<team>/<name>&version=<n>
//	  200 the task version: {name, version, status, type, spec{params, results, …}}
//	  404 no such task or version
//
// version is left out for the latest.
type Tasks struct{ c *caller }

// NewTasks returns the client of service "tasks".
func NewTasks(resolver registry.Resolver, signer *auth.Signer) *Tasks {
	return &Tasks{c: newCaller("tasks", resolver, signer)}
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
	a, err := t.c.get(ctx, Self, "/internal/v1/tasks/resolve", q, &task)
	switch {
	case err != nil:
		return domain.TaskDefinition{}, err
	// A 404 for the route itself (a tasks service without the endpoint) is not a task
	// the catalogue lacks: saving must not blame the workflow for it.
	case a.status == http.StatusNotFound && a.reason != apperr.RouteNotFound.Name:
		return domain.TaskDefinition{}, apperr.New(apperr.TaskNotFound, "Task '%s' was not found.", ref)
	case a.status != http.StatusOK:
		return domain.TaskDefinition{}, t.c.unavailable(fmt.Errorf("resolve task %s: status %d %s", ref, a.status, a.reason))
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
type Params struct{ c *caller }

// NewParams returns the client of service "identity".
func NewParams(resolver registry.Resolver, signer *auth.Signer) *Params {
	return &Params{c: newCaller("identity", resolver, signer)}
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
	a, err := p.c.get(ctx, p.principal(ctx), "/api/v2/parameters", nil, &params)
	if err != nil {
		return nil, err
	}
	if a.status != http.StatusOK {
		return nil, p.c.unavailable(fmt.Errorf("list global parameters: status %d %s", a.status, a.reason))
	}
	return names(params), nil
}

// TeamParams implements app.ParamSource.
func (p *Params) TeamParams(ctx context.Context, team string) ([]string, error) {
	var body struct {
		Parameters []namedJSON `json:"parameters"`
	}
	a, err := p.c.get(ctx, p.principal(ctx), "/api/v2/team/"+url.PathEscape(team), nil, &body)
	if err != nil {
		return nil, err
	}
	if a.status != http.StatusOK {
		return nil, p.c.unavailable(fmt.Errorf("read team %s: status %d %s", team, a.status, a.reason))
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
	c   *caller
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
	return &Quotas{c: newCaller("identity", resolver, signer), ttl: 5 * time.Second, now: time.Now, limits: map[string]quotaEntry{}}
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
	ans, err := q.c.get(ctx, Self, "/api/v2/team/"+url.PathEscape(team), nil, &body)
	if err != nil {
		return 0, err
	}
	switch {
	case ans.status == http.StatusNotFound:
		return 0, apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", team)
	case ans.status != http.StatusOK:
		return 0, q.c.unavailable(fmt.Errorf("team %s: status %d %s", team, ans.status, ans.reason))
	case body.Quotas.MaxWorkflowCount == nil:
		return 0, q.c.unavailable(fmt.Errorf("team %s: no maxWorkflowCount in identity's answer", team))
	}
	q.mu.Lock()
	q.limits[team] = quotaEntry{max: *body.Quotas.MaxWorkflowCount, at: q.now()}
	q.mu.Unlock()
	return *body.Quotas.MaxWorkflowCount, nil
}

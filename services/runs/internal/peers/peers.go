// Package peers calls the services the runs service depends on, over HTTP through
// discovery, as the runs service: workflows for the version a run runs, tasks for catalogue
// specs, identity for a team's run context.
package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/engine"
)

// Self is the principal the runs service acts as.
var Self = auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}

const timeout = 10 * time.Second

type caller struct {
	service  string
	resolver registry.Resolver
	signer   *auth.Signer
	client   *http.Client
	next     atomic.Uint64
}

func newCaller(service string, resolver registry.Resolver, signer *auth.Signer) *caller {
	return &caller{service: service, resolver: resolver, signer: signer,
		client: &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// get calls path and decodes a 200 answer into out. Another answer is returned as the
// peer's own error (its reason and message), so a 404 from workflows reaches the caller
// as that 404.
func (c *caller) get(ctx context.Context, path string, query url.Values, out any) error {
	urls, err := c.resolver.Resolve(ctx, c.service)
	if err != nil || len(urls) == 0 {
		return apperr.Wrap(apperr.DependencyUnavailable, err, "The %s service is unavailable; try again.", c.service)
	}
	u := urls[int(c.next.Add(1)%uint64(len(urls)))] + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("request %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json")
	if err := c.signer.SetHeaders(Self, req.Header.Set); err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return apperr.Wrap(apperr.DependencyUnavailable, err, "The %s service is unavailable; try again.", c.service)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var body struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		}
		_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body)
		for _, r := range apperr.Catalogue {
			if r.Name == body.Reason && r.Kind.HTTPStatus() == resp.StatusCode && r.Kind.HTTPStatus() < 500 {
				return apperr.New(r, "%s", body.Message)
			}
		}
		return apperr.New(apperr.DependencyUnavailable, "The %s service answered %d; try again.", c.service, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return apperr.Wrap(apperr.DependencyUnavailable, err, "The %s service answered in a form runs cannot read.", c.service)
	}
	return nil
}

// Workflows reads workflow versions from the workflows service.
type Workflows struct{ c *caller }

// NewWorkflows returns the client of service "workflows".
func NewWorkflows(r registry.Resolver, s *auth.Signer) *Workflows {
	return &Workflows{c: newCaller("workflows", r, s)}
}

// Snapshot implements engine.Definitions with
// GET /internal/v1/teams/{team}/workflows/{name}?version=n.
func (w *Workflows) Snapshot(ctx context.Context, team, workflow string, version int) (*domain.Definition, error) {
	q := url.Values{}
	if version > 0 {
		q.Set("version", strconv.Itoa(version))
	}
	var def domain.Definition
	err := w.c.get(ctx, "/internal/v1/teams/"+url.PathEscape(team)+"/workflows/"+url.PathEscape(workflow), q, &def)
	if err != nil {
		return nil, err
	}
	return &def, nil
}

// Tasks reads catalogue tasks from the tasks service; versions never change, so each is
// read once.
type Tasks struct {
	c     *caller
	mu    sync.Mutex
	cache map[string]taskAnswer
}

type taskAnswer struct {
	Version int         `json:"version"`
	Spec    domain.Spec `json:"spec"`
}

// NewTasks returns the client of service "tasks".
func NewTasks(r registry.Resolver, s *auth.Signer) *Tasks {
	return &Tasks{c: newCaller("tasks", r, s), cache: map[string]taskAnswer{}}
}

// TaskSpec implements engine.Catalogue with GET /internal/v1/tasks/resolve?ref=&version=.
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
		if err := t.c.get(ctx, "/internal/v1/tasks/resolve", q, &a); err != nil {
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
type Identity struct{ c *caller }

// NewIdentity returns the client of service "identity".
func NewIdentity(r registry.Resolver, s *auth.Signer) *Identity {
	return &Identity{c: newCaller("identity", r, s)}
}

// RunContext implements engine.Contexts with GET /internal/v1/teams/{team}/run-context.
func (i *Identity) RunContext(ctx context.Context, team string) (engine.TeamContext, error) {
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
	}
	if err := i.c.get(ctx, "/internal/v1/teams/"+url.PathEscape(team)+"/run-context", nil, &a); err != nil {
		return engine.TeamContext{}, err
	}
	return engine.TeamContext{
		Global: a.GlobalParams, Team: a.TeamParams, Secrets: a.Secrets,
		MaxMonthly: a.Quotas.MaxWorkflowRunMonthly, MaxDuration: a.Quotas.MaxWorkflowRunDuration,
		MaxConcurrent: a.Quotas.MaxConcurrentRuns, TaskDefaultTimeout: a.TaskDefaultTimeout,
	}, nil
}

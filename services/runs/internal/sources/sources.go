// Package sources fetches what a run is made of from the services that own it, through
// their internal contracts (libs/workflowsapi, libs/tasksapi, libs/identityapi), and turns
// each answer into the runs service's own types: the workflow version a run runs, the
// catalogue specs of its template tasks, and the team's parameters and limits.
package sources

import (
	"context"
	"strconv"
	"sync"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/tasksapi"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Self is the principal the runs service acts as.
var Self = auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}

// Workflows reads workflow versions from the workflows service.
type Workflows struct{ c *workflowsapi.Client }

// NewWorkflows returns the reader of workflow versions.
func NewWorkflows(r registry.Resolver, s *auth.Signer) *Workflows {
	return &Workflows{c: workflowsapi.New(r, s, Self)}
}

// Snapshot implements app.Definitions.
func (w *Workflows) Snapshot(ctx context.Context, team, workflow string, version int) (*domain.Definition, error) {
	v, err := w.c.RunnableVersion(ctx, team, workflow, version)
	if err != nil {
		return nil, err
	}
	return definition(v), nil
}

// definition is the workflow version a run runs.
func definition(v workflowsapi.RunnableVersion) *domain.Definition {
	def := &domain.Definition{Name: v.Name, DisplayName: v.DisplayName, Team: v.Team, Status: v.Status, Version: v.Version,
		Timeout: v.Timeout, Retries: v.Retries, Params: v.Params, Workspaces: v.Workspaces}
	if v.Triggers != nil {
		def.Triggers = make(map[string]struct {
			Enabled bool `json:"enabled"`
		}, len(v.Triggers))
		for name, t := range v.Triggers {
			def.Triggers[name] = struct {
				Enabled bool `json:"enabled"`
			}{t.Enabled}
		}
	}
	for _, t := range v.Tasks {
		td := domain.TaskDef{Name: t.Name, Type: t.Type, TaskRef: t.TaskRef, TaskVersion: t.TaskVersion, Timeout: t.Timeout,
			Retries: t.Retries, RetryDelay: t.RetryDelay, Join: t.Join, Results: t.Results, Labels: t.Labels}
		for _, d := range t.Dependencies {
			td.Dependencies = append(td.Dependencies, domain.Dependency(d))
		}
		for _, p := range t.Params {
			td.Params = append(td.Params, domain.TaskParam(p))
		}
		def.Tasks = append(def.Tasks, td)
	}
	return def
}

// Tasks reads catalogue tasks from the tasks service; a version never changes, so each is
// read once.
type Tasks struct {
	c     *tasksapi.Client
	mu    sync.Mutex
	cache map[string]resolved
}

type resolved struct {
	spec    domain.Spec
	version int
}

// NewTasks returns the reader of catalogue tasks.
func NewTasks(r registry.Resolver, s *auth.Signer) *Tasks {
	return &Tasks{c: tasksapi.New(r, s, Self), cache: map[string]resolved{}}
}

// TaskSpec implements app.Catalogue.
func (t *Tasks) TaskSpec(ctx context.Context, ref string, version int) (*domain.Spec, int, error) {
	key := ref + "@" + strconv.Itoa(version)
	t.mu.Lock()
	got, ok := t.cache[key]
	t.mu.Unlock()
	if !ok {
		task, err := t.c.Resolve(ctx, ref, version)
		if err != nil {
			return nil, 0, err
		}
		got = resolved{spec: spec(task.Spec), version: task.Version}
		if version > 0 {
			t.mu.Lock()
			t.cache[key] = got
			t.mu.Unlock()
		}
	}
	s := got.spec
	return &s, got.version, nil
}

// spec is the step a catalogue task runs.
func spec(s tasksapi.Spec) domain.Spec {
	out := domain.Spec{Image: s.Image, Command: s.Command, Arguments: s.Arguments, Script: s.Script, WorkingDir: s.WorkingDir,
		Params: s.Params}
	for _, e := range s.Envs {
		out.Envs = append(out.Envs, domain.EnvVar{Name: e.Name, Value: e.Value})
	}
	for _, r := range s.Results {
		out.Results = append(out.Results, domain.NamedRef{Name: r.Name})
	}
	return out
}

// Identity reads teams' run contexts from identity.
type Identity struct{ c *identityapi.Client }

// NewIdentity returns the reader of teams' run contexts.
func NewIdentity(r registry.Resolver, s *auth.Signer) *Identity {
	return &Identity{c: identityapi.New(r, s, Self)}
}

// RunContext implements app.Contexts.
func (i *Identity) RunContext(ctx context.Context, team string) (app.TeamContext, error) {
	rc, err := i.c.RunContext(ctx, team)
	if err != nil {
		return app.TeamContext{}, err
	}
	return app.TeamContext{
		Global: rc.GlobalParams, Team: rc.TeamParams, Secrets: rc.Secrets,
		MaxMonthly: rc.Quotas.MaxWorkflowRunMonthly, MaxDuration: rc.Quotas.MaxWorkflowRunDuration,
		MaxConcurrent: rc.Quotas.MaxConcurrentRuns, TaskDefaultTimeout: rc.TaskDefaultTimeout,
		MaxDepth: rc.MaxDepth, MaxTreeRuns: rc.MaxTreeRuns, PreventSelfApproval: rc.PreventSelfApproval,
	}, nil
}

// ApproverGroups implements app.Approvers.
func (i *Identity) ApproverGroups(ctx context.Context, team string) ([]app.ApproverGroup, error) {
	ag, err := i.c.ApproverGroups(ctx, team)
	if err != nil {
		return nil, err
	}
	out := make([]app.ApproverGroup, len(ag.Groups))
	for k, g := range ag.Groups {
		out[k] = app.ApproverGroup{ID: g.ID, Name: g.Name, Approvers: g.Approvers}
	}
	return out, nil
}

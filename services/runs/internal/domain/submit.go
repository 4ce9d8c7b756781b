package domain

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	libnames "github.com/baton-flow/baton/libs/names"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/params"
)

// SubmitRequest is what a submit, a start or a retry brings to a run.
type SubmitRequest struct {
	Labels      map[string]string
	Annotations map[string]any
	Params      map[string]any
	Workspaces  json.RawMessage
	// Secret names params that hold a secret though the workflow does not declare them
	// passwords: a parent run passing one on to its child.
	Secret []string
	// Timeout is in minutes.
	Timeout *int
	Retries *int
	Debug   bool
}

// Limits are the team's limits a new run is held to.
type Limits struct {
	// MaxDuration is maxWorkflowRunDuration in minutes: a run's default timeout and cap.
	MaxDuration int
	// TaskDefaultTimeout is the task.default.timeout setting in minutes.
	TaskDefaultTimeout int
}

// MaxRunValuesBytes bounds a run's params and results together (API.md §8).
const MaxRunValuesBytes = params.MaxRunValuesBytes

// ErrRequest is a request a run cannot be made from; Fields name what is wrong.
type ErrRequest struct {
	Message string
	Fields  map[string]string
}

func (e *ErrRequest) Error() string { return e.Message }

// NewRun makes a queued run of def and its task runs.
func NewRun(id string, def *Definition, req SubmitRequest, trigger string, by Initiator, now time.Time, lim Limits) (*Run, []*TaskRun, error) {
	if _, err := NewGraph(def); err != nil {
		return nil, nil, &ErrRequest{Message: "The workflow cannot run: " + err.Error() + "."}
	}
	if err := checkLabels(req.Labels); err != nil {
		return nil, nil, err
	}
	values, err := mergeParams(def.Params, req.Params)
	if err != nil {
		return nil, nil, err
	}
	now = now.UTC().Truncate(time.Millisecond)
	r := &Run{
		ID: id, Workflow: def.Name, WorkflowDisplayName: def.DisplayName, WorkflowVersion: def.Version, Team: def.Team,
		Status: Ready, Phase: Queued, Trigger: trigger, InitiatedBy: by,
		Labels: req.Labels, Annotations: req.Annotations, Params: values, Workspaces: req.Workspaces,
		CreationDate: now, Debug: req.Debug, Definition: def, Tasks: len(def.Tasks),
		TaskDefaultTimeout: lim.TaskDefaultTimeout, Version: 1,
	}
	if r.Workspaces == nil {
		r.Workspaces = def.Workspaces
	}
	for _, p := range def.Params {
		if p.Type == "password" {
			r.SecretParams = setName(r.SecretParams, p.Name, true)
		}
	}
	for _, name := range req.Secret {
		if _, ok := values[name]; ok {
			r.SecretParams = setName(r.SecretParams, name, true)
		}
	}
	r.Timeout = lim.MaxDuration
	for _, t := range []*int{def.Timeout, req.Timeout} {
		if t != nil && *t > 0 && (lim.MaxDuration <= 0 || *t < lim.MaxDuration) {
			r.Timeout = *t
		}
	}
	if req.Retries != nil {
		r.Retries = *req.Retries
	} else if def.Retries != nil {
		r.Retries = *def.Retries
	}
	if size(values) > MaxRunValuesBytes {
		return nil, nil, &ErrRequest{Message: fmt.Sprintf("The run's params take more than %d bytes.", MaxRunValuesBytes)}
	}
	tasks := make([]*TaskRun, len(def.Tasks))
	for i, t := range def.Tasks {
		tr := &TaskRun{ID: TaskRunID(id, i), RunID: id, Index: i, Name: t.Name, Type: t.Type, Status: NotStarted,
			TaskRef: t.TaskRef, CreationDate: now, Labels: t.Labels, Version: 1}
		if t.TaskVersion != nil {
			tr.TaskVersion = *t.TaskVersion
		}
		tasks[i] = tr
	}
	return r, tasks, nil
}

// mergeParams lays the submitted params over the workflow's values and defaults and
// checks that every required param has a value.
func mergeParams(defs []Param, given map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for _, p := range defs {
		if raw := firstPresent(p.Value, p.Default); raw != nil {
			v, err := decode(raw)
			if err != nil {
				return nil, &ErrRequest{Message: fmt.Sprintf("The workflow's param '%s' has an invalid value.", p.Name)}
			}
			out[p.Name] = v
		}
	}
	maps.Copy(out, given)
	missing := map[string]string{}
	for _, p := range defs {
		if v, ok := out[p.Name]; p.Required && (!ok || v == nil || v == "") {
			missing["params."+p.Name] = "required"
		}
	}
	if len(missing) > 0 {
		names := make([]string, 0, len(missing))
		for k := range missing {
			names = append(names, strings.TrimPrefix(k, "params."))
		}
		sort.Strings(names)
		return nil, &ErrRequest{Message: "Missing required params: " + strings.Join(names, ", ") + ".", Fields: missing}
	}
	return out, nil
}

func size(v any) int { return params.Size(v) }

// NewRetry makes a run that retries old: the same definition and params with req merged
// in. fromFailure keeps the tasks that succeeded, with their results.
func NewRetry(id string, old *Run, oldTasks []*TaskRun, req SubmitRequest, fromFailure bool, by Initiator, now time.Time) (*Run, []*TaskRun, error) {
	if !old.Phase.Ended() || old.Status == Succeeded {
		return nil, nil, errPhase(old)
	}
	p := maps.Clone(old.Params)
	if p == nil {
		p = map[string]any{}
	}
	maps.Copy(p, req.Params)
	if by.Person == "" {
		// Retried by Baton itself, or by a credential no user answers for: whoever
		// answered for the run it retries answers for the retry.
		by.Person = old.InitiatedBy.Person
	}
	def := *old.Definition
	r, tasks, err := NewRun(id, &def, SubmitRequest{Labels: mergeLabels(old.Labels, req.Labels),
		Annotations: mergeAny(old.Annotations, req.Annotations), Params: p, Secret: slices.Concat(old.SecretParams, req.Secret), Workspaces: firstPresent(req.Workspaces, old.Workspaces),
		Timeout: &old.Timeout, Debug: old.Debug}, "retry", by, now, Limits{MaxDuration: old.Timeout, TaskDefaultTimeout: old.TaskDefaultTimeout})
	if err != nil {
		return nil, nil, err
	}
	r.Team, r.RetryOf, r.Context = old.Team, old.ID, old.Context
	// A retry nests as deep as the run it retries: its children go no deeper. It is a
	// run of its own, though, started by a user or by the failure, not by a parent: no
	// cancel of the old run's ancestors stops it, and it takes a slot of its own.
	r.ParentRun, r.ParentTask, r.Depth = old.ParentRun, old.ParentTask, old.Depth
	if old.Retries > 0 {
		r.Retries = old.Retries - 1
	}
	if fromFailure {
		for i, t := range oldTasks {
			if t.Status == Succeeded && i < len(tasks) && def.Tasks[i].Type != tasktype.Start && def.Tasks[i].Type != tasktype.End {
				tasks[i].Kept = true
				tasks[i].Results = t.Results
				tasks[i].Decision = t.Decision
				tasks[i].Params = t.Params
				tasks[i].SecretParams, tasks[i].SecretResults = t.SecretParams, t.SecretResults
			}
		}
	}
	return r, tasks, nil
}

// checkLabels refuses label keys the stores cannot keep as given (libnames.CheckLabelKey).
func checkLabels(labels map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if err := libnames.CheckLabelKey(k); err != nil {
			return &ErrRequest{Message: "A label key is not allowed: " + err.Error() + ".", Fields: map[string]string{"labels": err.Error()}}
		}
	}
	return nil
}

func mergeLabels(a, b map[string]string) map[string]string {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

func mergeAny(a, b map[string]any) map[string]any {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]any{}
	}
	maps.Copy(out, b)
	return out
}

// Merge lays a start request over a queued run: labels and annotations merged, params
// replaced by name.
func (r *Run) Merge(req SubmitRequest) error {
	if err := checkLabels(req.Labels); err != nil {
		return err
	}
	r.Labels = mergeLabels(r.Labels, req.Labels)
	// The run's trace stays the one it was created in, whatever the request says.
	r.Annotations = mergeAny(r.Annotations, VisibleAnnotations(req.Annotations))
	if len(req.Params) > 0 {
		p := maps.Clone(r.Params)
		if p == nil {
			p = map[string]any{}
		}
		maps.Copy(p, req.Params)
		if size(p) > MaxRunValuesBytes {
			return &ErrRequest{Message: fmt.Sprintf("The run's params take more than %d bytes.", MaxRunValuesBytes)}
		}
		r.Params = p
		for _, name := range req.Secret {
			if _, ok := p[name]; ok {
				r.SecretParams = setName(r.SecretParams, name, true)
			}
		}
		// A secret given at start is masked as those given at submit are.
		for _, name := range r.SecretParams {
			if v, ok := req.Params[name]; ok {
				for _, s := range SecretTexts(v) {
					if !slices.Contains(r.Context.Secrets, s) {
						r.Context.Secrets = append(r.Context.Secrets, s)
					}
				}
			}
		}
	}
	if len(req.Workspaces) > 0 {
		r.Workspaces = req.Workspaces
	}
	return nil
}

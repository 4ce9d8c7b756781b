// Package domain holds the tasks service's types and rules: plain Go, no transport or
// storage.
package domain

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// Scope says whose a task is: the instance's catalogue or one team's.
type Scope string

// Scopes.
const (
	ScopeGlobal Scope = "global"
	ScopeTeam   Scope = "team"
)

// Status is whether a task may be used by new workflow versions.
type Status string

// Statuses.
const (
	StatusActive   Status = "active"
	StatusInactive Status = "inactive"
)

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return s == StatusActive || s == StatusInactive }

// Ref names a task: a global one by its name, a team's by team and name.
type Ref struct {
	Scope Scope
	// Team is set for team tasks only.
	Team string
	Name string
}

// GlobalRef names the global task called name.
func GlobalRef(name string) Ref { return Ref{Scope: ScopeGlobal, Name: name} }

// TeamRef names the task called name of team.
func TeamRef(team, name string) Ref { return Ref{Scope: ScopeTeam, Team: team, Name: name} }

// String is the reference as workflows write it: `<name>` or `<team>/<name>`.
func (r Ref) String() string {
	if r.Scope == ScopeTeam {
		return r.Team + "/" + r.Name
	}
	return r.Name
}

// Task is one version of a task definition.
type Task struct {
	Name        string
	DisplayName string
	Description string
	// Type is what runs it (tasktype.Template unless it stands for a system task type).
	Type    string
	Version int
	Status  Status
	// Scope and Team say whose it is; they come from where it is stored, never a body.
	Scope Scope
	Team  string
	// CreationDate is when the task's first version was created.
	CreationDate time.Time
	Category     string
	Icon         string
	// Verified marks tasks Baton ships or an admin vouched for.
	Verified    bool
	Labels      map[string]string
	Annotations map[string]json.RawMessage
	// Changelog says who made this version, why and when.
	Changelog Changelog
	Spec      Spec
	// Extra holds fields clients sent that Baton does not know, echoed back unchanged:
	// designers keep their own data on tasks.
	Extra map[string]json.RawMessage
}

// Ref returns the reference of t.
func (t Task) Ref() Ref { return Ref{Scope: t.Scope, Team: t.Team, Name: t.Name} }

// Changelog records one version's author, reason and date.
type Changelog struct {
	Author string
	Reason string
	Date   time.Time
}

// VersionChange is one entry of a task's history.
type VersionChange struct {
	Version int
	Changelog
}

// Spec is what a runner executes: one step, its inputs and outputs.
type Spec struct {
	Image     string
	Command   []string
	Arguments []string
	Script    string
	// WorkingDir is the step's working directory.
	WorkingDir string
	Envs       []Env
	Params     []Param
	Results    []Result
	// Workspaces are the Tekton workspaces the step mounts, kept so Tekton YAML survives
	// a round trip through JSON.
	Workspaces []Workspace
	// StepName is the Tekton step's name when it is not DefaultStepName.
	StepName string
	Extra    map[string]json.RawMessage
}

// DefaultStepName is the name of the one step when a task does not name it.
const DefaultStepName = "main"

// Env is one environment variable of the step.
type Env struct {
	Name  string
	Value string
}

// Param is one input of a task: the contract's AbstractParam. Default and Value hold any
// JSON value.
type Param struct {
	Name           string
	Label          string
	Description    string
	Type           string
	Default        json.RawMessage
	Value          json.RawMessage
	Required       bool
	Placeholder    string
	HelperText     string
	Options        []ParamOption
	MinValueLength *int
	MaxValueLength *int
	ReadOnly       bool
	HiddenValue    bool
	Extra          map[string]json.RawMessage
}

// ParamOption is one choice of a select or multiselect parameter.
type ParamOption struct {
	Key   string
	Value string
}

// Result is one output of a task.
type Result struct {
	Name        string
	Description string
	// Type is Tekton's result type (string, array, object), when one was given.
	Type  string
	Extra map[string]json.RawMessage
}

// Workspace is a Tekton workspace declaration.
type Workspace struct {
	Name        string
	Description string
	MountPath   string
	ReadOnly    bool
	Optional    bool
}

// Clone returns a deep copy of t.
func (t Task) Clone() Task {
	c := t
	c.Labels = maps.Clone(t.Labels)
	c.Annotations = cloneRaw(t.Annotations)
	c.Extra = cloneRaw(t.Extra)
	c.Spec = t.Spec.clone()
	return c
}

func (s Spec) clone() Spec {
	c := s
	c.Command = slices.Clone(s.Command)
	c.Arguments = slices.Clone(s.Arguments)
	c.Envs = slices.Clone(s.Envs)
	c.Workspaces = slices.Clone(s.Workspaces)
	c.Extra = cloneRaw(s.Extra)
	c.Params = make([]Param, len(s.Params))
	for i, p := range s.Params {
		p.Default = bytes.Clone(p.Default)
		p.Value = bytes.Clone(p.Value)
		p.Options = slices.Clone(p.Options)
		p.Extra = cloneRaw(p.Extra)
		c.Params[i] = p
	}
	if s.Params == nil {
		c.Params = nil
	}
	c.Results = make([]Result, len(s.Results))
	for i, r := range s.Results {
		r.Extra = cloneRaw(r.Extra)
		c.Results[i] = r
	}
	if s.Results == nil {
		c.Results = nil
	}
	return c
}

func cloneRaw(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = bytes.Clone(v)
	}
	return out
}

// IsAbsent reports whether a JSON value is missing or null.
func IsAbsent(v json.RawMessage) bool {
	trimmed := bytes.TrimSpace(v)
	return len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null"))
}

package workflowsapi

import (
	"encoding/json"
	"time"

	"github.com/baton-flow/baton/libs/jsonextra"
	"github.com/baton-flow/baton/libs/param"
)

// WorkflowVersion is the answer of GET /internal/v1/teams/{team}/workflows/{name}: one
// version of a team's workflow with its tasks and its secrets in the clear, as a run keeps
// it. It is the workflow document (API.md §3, Workflow): the members Baton knows, then,
// at each level that keeps them (workflow, triggers, task, dependency), those a client
// stored that Baton does not know, in name order.
type WorkflowVersion struct {
	// ID is the stable id v4 clients address a workflow by.
	ID           string                     `json:"id,omitempty"`
	Name         string                     `json:"name"`
	DisplayName  string                     `json:"displayName,omitempty"`
	Team         string                     `json:"team,omitempty"`
	Status       string                     `json:"status,omitempty"`
	Version      int                        `json:"version,omitempty"`
	CreationDate *Time                      `json:"creationDate,omitempty"`
	Changelog    *Changelog                 `json:"changelog,omitempty"`
	Icon         string                     `json:"icon,omitempty"`
	Description  string                     `json:"description,omitempty"`
	Markdown     string                     `json:"markdown,omitempty"`
	Labels       map[string]string          `json:"labels,omitempty"`
	Annotations  map[string]json.RawMessage `json:"annotations,omitempty"`
	// Timeout is in minutes; Retries are automatic whole-run retries from failure.
	Timeout    *int            `json:"timeout,omitempty"`
	Retries    *int            `json:"retries,omitempty"`
	Params     []param.Param   `json:"params,omitempty"`
	Workspaces json.RawMessage `json:"workspaces,omitempty"`
	Triggers   *Triggers       `json:"triggers,omitempty"`
	Tasks      []Task          `json:"tasks,omitempty"`
	// Extra holds the members Baton does not know.
	Extra map[string]json.RawMessage `json:"-"`
}

// Time is a time written in RFC 3339, UTC, with milliseconds, the contract's format.
type Time struct{ time.Time }

// TimeFormat is the format Time is written in.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes TimeFormat.
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.UTC().Format(TimeFormat) + `"`), nil
}

// Changelog says who saved a version, why and when.
type Changelog struct {
	Author string `json:"author,omitempty"`
	Reason string `json:"reason,omitempty"`
	Date   *Time  `json:"date,omitempty"`
}

// Triggers say how runs of the workflow may start. `github` is v4's name for `codehost`;
// both are written, with the same value.
type Triggers struct {
	Manual   *Trigger `json:"manual,omitempty"`
	Schedule *Trigger `json:"schedule,omitempty"`
	Webhook  *Trigger `json:"webhook,omitempty"`
	Event    *Trigger `json:"event,omitempty"`
	Codehost *Trigger `json:"codehost,omitempty"`
	Github   *Trigger `json:"github,omitempty"`
	// Extra holds trigger kinds Baton does not know (v4 had more).
	Extra map[string]json.RawMessage `json:"-"`
}

// Trigger is one way of starting runs, with conditions on the incoming payload.
type Trigger struct {
	Enabled    bool        `json:"enabled"`
	Conditions []Condition `json:"conditions,omitempty"`
}

// Condition must hold on an incoming payload for its trigger to start a run.
type Condition struct {
	// Field is a JSONPath into the payload.
	Field     string   `json:"field"`
	Operation string   `json:"operation"`
	Value     string   `json:"value,omitempty"`
	Values    []string `json:"values,omitempty"`
}

// Task is a task of the workflow: a node of its DAG.
type Task struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// TaskRef names a catalogue task: a global task, or `<team>/<task>`; TaskVersion is its
	// version, pinned when the workflow was saved.
	TaskRef     string `json:"taskRef,omitempty"`
	TaskVersion *int   `json:"taskVersion,omitempty"`
	// Timeout is in minutes; RetryDelay in seconds.
	Timeout      *int                       `json:"timeout,omitempty"`
	Retries      *int                       `json:"retries,omitempty"`
	RetryDelay   *int                       `json:"retryDelay,omitempty"`
	Join         string                     `json:"join,omitempty"`
	Dependencies []Dependency               `json:"dependencies,omitempty"`
	Params       []TaskParam                `json:"params,omitempty"`
	Results      json.RawMessage            `json:"results,omitempty"`
	Labels       map[string]string          `json:"labels,omitempty"`
	Annotations  map[string]json.RawMessage `json:"annotations,omitempty"`
	// Extra holds the members Baton does not know.
	Extra map[string]json.RawMessage `json:"-"`
}

// TaskParam is a value given to a task parameter.
type TaskParam struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Dependency is an edge of the DAG: the task runs after TaskRef, if the edge holds.
type Dependency struct {
	TaskRef string `json:"taskRef"`
	// ExecutionCondition is always (when empty), success or failure.
	ExecutionCondition string `json:"executionCondition,omitempty"`
	// DecisionCondition holds newline-separated RE2 patterns matched against the value of
	// an upstream decision task.
	DecisionCondition string `json:"decisionCondition,omitempty"`
	// Extra holds the members Baton does not know (canvas edge data).
	Extra map[string]json.RawMessage `json:"-"`
}

// The plain types have the same fields without the methods, so the methods can use the
// standard encoding for the known fields.
type (
	plainVersion    WorkflowVersion
	plainTriggers   Triggers
	plainTask       Task
	plainDependency Dependency
)

var (
	versionKeys    = jsonextra.Keys(plainVersion{})
	triggersKeys   = jsonextra.Keys(plainTriggers{})
	taskKeys       = jsonextra.Keys(plainTask{})
	dependencyKeys = jsonextra.Keys(plainDependency{})
)

// MarshalJSON writes the known members, then the kept unknown ones.
func (v WorkflowVersion) MarshalJSON() ([]byte, error) {
	return jsonextra.Marshal(plainVersion(v), v.Extra)
}

// UnmarshalJSON reads the known members and keeps the others.
func (v *WorkflowVersion) UnmarshalJSON(b []byte) (err error) {
	v.Extra, err = jsonextra.Unmarshal(b, (*plainVersion)(v), versionKeys)
	return err
}

// MarshalJSON writes the known members, then the kept unknown ones.
func (t Triggers) MarshalJSON() ([]byte, error) { return jsonextra.Marshal(plainTriggers(t), t.Extra) }

// UnmarshalJSON reads the known members and keeps the others.
func (t *Triggers) UnmarshalJSON(b []byte) (err error) {
	t.Extra, err = jsonextra.Unmarshal(b, (*plainTriggers)(t), triggersKeys)
	return err
}

// MarshalJSON writes the known members, then the kept unknown ones.
func (t Task) MarshalJSON() ([]byte, error) { return jsonextra.Marshal(plainTask(t), t.Extra) }

// UnmarshalJSON reads the known members and keeps the others.
func (t *Task) UnmarshalJSON(b []byte) (err error) {
	t.Extra, err = jsonextra.Unmarshal(b, (*plainTask)(t), taskKeys)
	return err
}

// MarshalJSON writes the known members, then the kept unknown ones.
func (d Dependency) MarshalJSON() ([]byte, error) {
	return jsonextra.Marshal(plainDependency(d), d.Extra)
}

// UnmarshalJSON reads the known members and keeps the others.
func (d *Dependency) UnmarshalJSON(b []byte) (err error) {
	d.Extra, err = jsonextra.Unmarshal(b, (*plainDependency)(d), dependencyKeys)
	return err
}

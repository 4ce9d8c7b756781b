package domain

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/baton-flow/baton/libs/jsonextra"
	"github.com/baton-flow/baton/libs/param"
	"github.com/baton-flow/baton/libs/tasktype"
)

// A workflow's body is a document its clients own, fields Baton does not know included, so
// the domain types below are that document: they carry their JSON shape (API.md §3) and
// keep unknown members in Extra. Templates share the type: a template is a workflow without
// a team.

// Status is a workflow's status.
type Status string

// Workflow statuses.
const (
	StatusActive   Status = "active"
	StatusInactive Status = "inactive"
)

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return s == StatusActive || s == StatusInactive }

// TimeFormat is the contract's format for times in bodies: RFC 3339, UTC, milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Time is a time written in TimeFormat.
type Time struct{ time.Time }

// NewTime returns t truncated to milliseconds, in UTC.
func NewTime(t time.Time) *Time { return &Time{t.UTC().Truncate(time.Millisecond)} }

// MarshalJSON writes TimeFormat.
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.UTC().Format(TimeFormat) + `"`), nil
}

// Workflow is a version of a team's workflow, or of a template.
type Workflow struct {
	// ID is the stable id v4 clients address a workflow by (libs/workflowid), derived from
	// the team and name.
	ID          string `json:"id,omitempty"`
	Name        string `json:"name"`
	DisplayName string `json:"displayName,omitempty"`
	// ID, Team, Version and CreationDate are read-only: set by the service, ignored in
	// requests.
	Team         string                     `json:"team,omitempty"`
	Status       Status                     `json:"status,omitempty"`
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
	Params     []Param         `json:"params,omitempty"`
	Workspaces json.RawMessage `json:"workspaces,omitempty"`
	Triggers   *Triggers       `json:"triggers,omitempty"`
	Tasks      []Task          `json:"tasks,omitempty"`
	// RawTasks are the tasks as stored, when a read only renders them: writing them as they
	// are spares decoding and encoding every task. Used only while Tasks is nil.
	RawTasks json.RawMessage `json:"-"`
	Extra    Extra           `json:"-"`
}

// Load says how much of a stored version a read needs.
type Load int

// Loads.
const (
	// LoadSummary reads everything but the tasks.
	LoadSummary Load = iota
	// LoadTasks reads the tasks, decoded.
	LoadTasks
	// LoadRawTasks reads the tasks as stored JSON, into RawTasks, for rendering.
	LoadRawTasks
)

// Changelog says who saved a version, why and when.
type Changelog struct {
	Author string `json:"author,omitempty"`
	Reason string `json:"reason,omitempty"`
	Date   *Time  `json:"date,omitempty"`
}

// ChangelogEntry is one version's changelog, as the changelog endpoints list them.
type ChangelogEntry struct {
	Version int    `json:"version"`
	Author  string `json:"author,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Date    *Time  `json:"date,omitempty"`
}

// Param is the contract's AbstractParam: a workflow parameter and how a UI asks for it,
// read and written with v4's names too (`key`, `defaultValue`).
type Param = param.Param

// Option is one choice of a select or multiselect parameter.
type Option = param.Option

// ParamTypes are the AbstractParam types.
var ParamTypes = []string{
	"text", "textarea", "email", "number", "url", "boolean", "password", "select", "multiselect",
	"json", "texteditor", "texteditor::javascript", "texteditor::text", "texteditor::shell",
	"texteditor::yaml",
}

// Triggers say how runs of a workflow may start. `github` is v4's name for `codehost`: it is
// read as an alias and written back next to it.
type Triggers struct {
	Manual   *Trigger `json:"manual,omitempty"`
	Schedule *Trigger `json:"schedule,omitempty"`
	Webhook  *Trigger `json:"webhook,omitempty"`
	Event    *Trigger `json:"event,omitempty"`
	Codehost *Trigger `json:"codehost,omitempty"`
	Github   *Trigger `json:"github,omitempty"`
	Extra    Extra    `json:"-"`
}

// Trigger is one way of starting runs, with conditions on the incoming payload.
type Trigger struct {
	Enabled    bool        `json:"enabled"`
	Conditions []Condition `json:"conditions"`
}

// MarshalJSON writes a trigger; its conditions are left out when nil, and written when
// empty (an answer lists them: see AnswerTriggers).
func (t Trigger) MarshalJSON() ([]byte, error) {
	if t.Conditions == nil {
		return json.Marshal(struct {
			Enabled bool `json:"enabled"`
		}{t.Enabled})
	}
	type plain Trigger
	return json.Marshal(plain(t))
}

// Condition must hold on an incoming payload for its trigger to start a run.
type Condition struct {
	// Field is a JSONPath into the payload.
	Field     string   `json:"field"`
	Operation string   `json:"operation"`
	Value     string   `json:"value,omitempty"`
	Values    []string `json:"values,omitempty"`
}

// Condition operations.
var ConditionOperations = []string{"equals", "matches", "in"}

// Task is a task of a workflow: a node of its DAG.
type Task struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// TaskRef names a catalogue task: a global task, or `<team>/<task>`.
	TaskRef string `json:"taskRef,omitempty"`
	// TaskVersion is the catalogue task's version, pinned at save.
	TaskVersion *int `json:"taskVersion,omitempty"`
	// Timeout is in minutes; RetryDelay in seconds.
	Timeout      *int              `json:"timeout,omitempty"`
	Retries      *int              `json:"retries,omitempty"`
	RetryDelay   *int              `json:"retryDelay,omitempty"`
	Join         string            `json:"join,omitempty"`
	Dependencies []Dependency      `json:"dependencies,omitempty"`
	Params       []TaskParam       `json:"params,omitempty"`
	Results      json.RawMessage   `json:"results,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	// Annotations hold the canvas position under AnnotationPosition.
	Annotations map[string]json.RawMessage `json:"annotations,omitempty"`
	Extra       Extra                      `json:"-"`
}

// TaskParam is a value given to a task parameter.
type TaskParam struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value,omitempty"`
	// Secret: the catalogue task declares the param `password`. Saves mark it (see
	// MarkSecretParams); stored, its value is sealed, which marks it again when read.
	Secret bool `json:"-"`
}

// Dependency is an edge of the DAG: the task runs after TaskRef, if the edge holds.
type Dependency struct {
	// TaskRef names the upstream task of the same workflow.
	TaskRef string `json:"taskRef"`
	// ExecutionCondition is always (the default), success or failure.
	ExecutionCondition string `json:"executionCondition,omitempty"`
	// DecisionCondition holds newline-separated RE2 patterns matched against the value of
	// an upstream decision task.
	DecisionCondition string `json:"decisionCondition,omitempty"`
	Extra             Extra  `json:"-"`
}

// Join values and execution conditions.
const (
	JoinAll          = "all"
	JoinAny          = "any"
	ConditionAlways  = "always"
	ConditionSuccess = "success"
	ConditionFailure = "failure"
)

var (
	workflowFields   = jsonextra.Keys(workflowJSON{})
	taskFields       = jsonextra.Keys(taskJSON{})
	dependencyFields = jsonextra.Keys(dependencyJSON{})
	triggersFields   = jsonextra.Keys(triggersJSON{})
)

// The *JSON types are the plain encodings, without the methods that keep extras.
type (
	workflowJSON   Workflow
	taskJSON       Task
	dependencyJSON Dependency
	triggersJSON   Triggers
)

// UnmarshalJSON reads a workflow, keeping unknown members. `id`, which v4 exports carry,
// is read-only and dropped.
func (w *Workflow) UnmarshalJSON(data []byte) error {
	var p workflowJSON
	extra, err := jsonextra.Unmarshal(data, &p, workflowFields)
	if err != nil {
		return err
	}
	p.Extra = extra
	p.ID = ""
	*w = Workflow(p)
	return nil
}

// MarshalJSON writes a workflow with its unknown members.
func (w Workflow) MarshalJSON() ([]byte, error) {
	extra := w.Extra
	if w.Tasks == nil && len(w.RawTasks) > 0 {
		extra = extra.Clone()
		if extra == nil {
			extra = Extra{}
		}
		extra["tasks"] = w.RawTasks
	}
	return jsonextra.Marshal(workflowJSON(w), extra)
}

// UnmarshalJSON reads a task, keeping unknown members.
func (t *Task) UnmarshalJSON(data []byte) error {
	var p taskJSON
	extra, err := jsonextra.Unmarshal(data, &p, taskFields)
	if err != nil {
		return err
	}
	p.Extra = extra
	*t = Task(p)
	return nil
}

// MarshalJSON writes a task with its unknown members.
func (t Task) MarshalJSON() ([]byte, error) {
	return jsonextra.Marshal(taskJSON(t), t.Extra)
}

// UnmarshalJSON reads a dependency, keeping unknown members (canvas edge data).
func (d *Dependency) UnmarshalJSON(data []byte) error {
	var p dependencyJSON
	extra, err := jsonextra.Unmarshal(data, &p, dependencyFields)
	if err != nil {
		return err
	}
	p.Extra = extra
	*d = Dependency(p)
	return nil
}

// MarshalJSON writes a dependency with its unknown members.
func (d Dependency) MarshalJSON() ([]byte, error) {
	return jsonextra.Marshal(dependencyJSON(d), d.Extra)
}

// UnmarshalJSON reads triggers, keeping unknown ones (v4 had more kinds).
func (t *Triggers) UnmarshalJSON(data []byte) error {
	var p triggersJSON
	extra, err := jsonextra.Unmarshal(data, &p, triggersFields)
	if err != nil {
		return err
	}
	p.Extra = extra
	*t = Triggers(p)
	return nil
}

// MarshalJSON writes triggers with `github` mirroring `codehost`, for older clients.
func (t Triggers) MarshalJSON() ([]byte, error) {
	p := triggersJSON(t)
	if p.Codehost == nil {
		p.Codehost = p.Github
	}
	p.Github = p.Codehost
	return jsonextra.Marshal(p, t.Extra)
}

// On reports whether the trigger is there and enabled.
func (t *Trigger) On() bool { return t != nil && t.Enabled }

// CodehostTrigger returns the code-host trigger, read under either of its names.
func (t *Triggers) CodehostTrigger() *Trigger {
	if t == nil {
		return nil
	}
	if t.Codehost != nil {
		return t.Codehost
	}
	return t.Github
}

// Normalize applies a workflow's defaults: status active, the manual trigger enabled, and
// `codehost` read from `github` when only the alias was sent. Templates are not
// normalized: what they leave out, the team workflow made from them decides.
func (w *Workflow) Normalize() {
	if w.Status == "" {
		w.Status = StatusActive
	}
	if w.Triggers == nil {
		w.Triggers = &Triggers{}
	}
	if w.Triggers.Manual == nil {
		w.Triggers.Manual = &Trigger{Enabled: true}
	}
	if w.Triggers.Codehost == nil {
		w.Triggers.Codehost = w.Triggers.Github
	}
	w.Triggers.Github = nil
	// A system task naming its type's catalogue task is stored naming none: that is what
	// the canvas answers for one that names none, so a canvas read and saved again stores
	// the tasks it read. (The runs service reads the catalogue for template tasks only.)
	implied := func(t Task) bool { return t.TaskRef != "" && t.TaskRef == tasktype.CatalogueTask(t.Type) }
	if slices.ContainsFunc(w.Tasks, implied) {
		w.Tasks = slices.Clone(w.Tasks)
		for i, t := range w.Tasks {
			if implied(t) {
				w.Tasks[i].TaskRef, w.Tasks[i].TaskVersion = "", nil
			}
		}
	}
}

// AnswerTriggers fills in every trigger kind w leaves out, so a workflow is answered with
// each of them: `manual` enabled (its default), the others disabled, and each with its
// conditions, an empty list when it has none. v4's web UI reads every kind's `enabled` and
// `conditions` without checking that they are there.
func (w *Workflow) AnswerTriggers() {
	t := Triggers{}
	if w.Triggers != nil {
		t = *w.Triggers
	}
	if t.Manual == nil {
		t.Manual = &Trigger{Enabled: true}
	}
	if t.Codehost == nil {
		t.Codehost = t.Github
	}
	for _, k := range []**Trigger{&t.Manual, &t.Schedule, &t.Webhook, &t.Event, &t.Codehost} {
		answered := Trigger{}
		if *k != nil {
			answered = **k
		}
		if answered.Conditions == nil {
			answered.Conditions = []Condition{}
		}
		*k = &answered
	}
	t.Github = nil
	w.Triggers = &t
}

// Definition returns w without its read-only fields (team, version, creation date,
// changelog): what a save stores as the version's content.
func (w Workflow) Definition() Workflow {
	w.ID, w.Team, w.Version, w.CreationDate, w.Changelog, w.RawTasks = "", "", 0, nil, nil, nil
	return w
}

// Clone returns a deep enough copy of w that changing its maps and slices leaves w alone.
func (w Workflow) Clone() Workflow {
	w.Labels = maps.Clone(w.Labels)
	w.Annotations = maps.Clone(w.Annotations)
	w.Params = slices.Clone(w.Params)
	w.Extra = w.Extra.Clone()
	if w.Triggers != nil {
		t := *w.Triggers
		t.Extra = t.Extra.Clone()
		w.Triggers = &t
	}
	if w.Tasks != nil {
		tasks := make([]Task, len(w.Tasks))
		for i, t := range w.Tasks {
			tasks[i] = t.Clone()
		}
		w.Tasks = tasks
	}
	return w
}

// Clone returns a copy of t that shares no map or slice with it.
func (t Task) Clone() Task {
	t.Labels = maps.Clone(t.Labels)
	t.Annotations = maps.Clone(t.Annotations)
	t.Params = slices.Clone(t.Params)
	t.Extra = t.Extra.Clone()
	if t.Dependencies != nil {
		deps := make([]Dependency, len(t.Dependencies))
		for i, d := range t.Dependencies {
			d.Extra = d.Extra.Clone()
			deps[i] = d
		}
		t.Dependencies = deps
	}
	return t
}

// Param returns the value given to the task parameter called name (or one of its aliases).
func (t Task) Param(names ...string) (json.RawMessage, bool) {
	for _, name := range names {
		for _, p := range t.Params {
			if p.Name == name {
				return p.Value, true
			}
		}
	}
	return nil, false
}

// Package tasksapi is the tasks service's internal contract: the endpoint under
// /internal/v1 that Baton's own services call, its answer type, a typed client, and golden
// fixtures of the JSON (testdata). The tasks service serves this type and its callers read
// it; neither side declares its own copy.
//
//	GET /internal/v1/tasks/resolve?ref=<name>|<team>/<name>[&version=<n>]
//	  200 Task: that version of the catalogue task, the latest when version is absent,
//	      password defaults in the clear (workflows pins references with it, runs read
//	      the spec a run executes)
//	  400 REQUEST_INVALID / TASK_INVALID_NAME for a malformed ref, QUERY_INVALID_FILTERS
//	      for a version that is not a positive integer
//	  404 TASK_NOT_FOUND when the task or that version does not exist
//	  403 PERMISSION_DENIED to a caller that is not one of Baton's services
//
// The caller judges status: an inactive task answers 200 with status "inactive".
package tasksapi

import (
	"encoding/json"

	"github.com/baton-flow/baton/libs/jsonextra"
	"github.com/baton-flow/baton/libs/param"
)

// Service is the name the tasks service registers under in discovery.
const Service = "tasks"

// Prefix is where the internal endpoints live; ResolveRoute is relative to it.
const Prefix = "/internal/v1"

// ResolveRoute is the resolve endpoint, for the tasks service's router.
const ResolveRoute = "/tasks/resolve"

// ResolvePath is the resolve endpoint, for callers.
const ResolvePath = Prefix + ResolveRoute

// Task is the API's Task body (API.md §3), which the tasks service reads and writes with it,
// and so the answer of GET /internal/v1/tasks/resolve: a version of a catalogue task,
// members Baton does not know included at each level that keeps them (task, spec, result),
// read compacted and without nulls, written after the known ones, in name order.
type Task struct {
	Name        string `json:"name,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
	Type        string `json:"type,omitempty"`
	Version     int    `json:"version,omitempty"`
	// Status is active or inactive.
	Status string `json:"status,omitempty"`
	// Scope is global or team; Team is set for team tasks.
	Scope string `json:"scope,omitempty"`
	Team  string `json:"team,omitempty"`
	// CreationDate is RFC 3339, UTC, with milliseconds.
	CreationDate string                     `json:"creationDate,omitempty"`
	Category     string                     `json:"category,omitempty"`
	Icon         string                     `json:"icon,omitempty"`
	Verified     bool                       `json:"verified"`
	Labels       map[string]string          `json:"labels,omitempty"`
	Annotations  map[string]json.RawMessage `json:"annotations,omitempty"`
	Changelog    *Changelog                 `json:"changelog,omitempty"`
	Spec         Spec                       `json:"spec"`
	// Extra holds the members Baton does not know.
	Extra map[string]json.RawMessage `json:"-"`
}

// Changelog says who saved the version, why and when (RFC 3339, UTC, milliseconds).
type Changelog struct {
	Version int    `json:"version,omitempty"`
	Author  string `json:"author,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Date    string `json:"date,omitempty"`
}

// Spec is the task's step.
type Spec struct {
	Image      string        `json:"image,omitempty"`
	Command    []string      `json:"command,omitempty"`
	Arguments  []string      `json:"arguments,omitempty"`
	Script     string        `json:"script,omitempty"`
	WorkingDir string        `json:"workingDir,omitempty"`
	Envs       []Env         `json:"envs,omitempty"`
	Params     []param.Param `json:"params,omitempty"`
	Results    []Result      `json:"results,omitempty"`
	Workspaces []Workspace   `json:"workspaces,omitempty"`
	StepName   string        `json:"stepName,omitempty"`
	// Extra holds the members Baton does not know.
	Extra map[string]json.RawMessage `json:"-"`
}

// Env is an environment variable of the step.
type Env struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Result is one output the task declares.
type Result struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Type        string `json:"type,omitempty"`
	// Extra holds the members Baton does not know.
	Extra map[string]json.RawMessage `json:"-"`
}

// Workspace is a Tekton workspace declaration.
type Workspace struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	MountPath   string `json:"mountPath,omitempty"`
	ReadOnly    bool   `json:"readOnly,omitempty"`
	Optional    bool   `json:"optional,omitempty"`
}

// The plain types have the same fields without the methods, so the methods can use the
// standard encoding for the known fields.
type (
	plainTask   Task
	plainSpec   Spec
	plainResult Result
)

var (
	taskKeys   = jsonextra.Keys(plainTask{})
	specKeys   = jsonextra.Keys(plainSpec{})
	resultKeys = jsonextra.Keys(plainResult{})
)

// MarshalJSON writes the known members, then the kept unknown ones.
func (t Task) MarshalJSON() ([]byte, error) { return jsonextra.Marshal(plainTask(t), t.Extra) }

// UnmarshalJSON reads the known members and keeps the others (see unmarshal).
func (t *Task) UnmarshalJSON(b []byte) (err error) {
	t.Extra, err = unmarshal(b, (*plainTask)(t), taskKeys)
	return err
}

// MarshalJSON writes the known members, then the kept unknown ones.
func (s Spec) MarshalJSON() ([]byte, error) { return jsonextra.Marshal(plainSpec(s), s.Extra) }

// UnmarshalJSON reads the known members and keeps the others (see unmarshal).
func (s *Spec) UnmarshalJSON(b []byte) (err error) {
	s.Extra, err = unmarshal(b, (*plainSpec)(s), specKeys)
	return err
}

// MarshalJSON writes the known members, then the kept unknown ones.
func (r Result) MarshalJSON() ([]byte, error) { return jsonextra.Marshal(plainResult(r), r.Extra) }

// UnmarshalJSON reads the known members and keeps the others (see unmarshal).
func (r *Result) UnmarshalJSON(b []byte) (err error) {
	r.Extra, err = unmarshal(b, (*plainResult)(r), resultKeys)
	return err
}

// unmarshal decodes b into known and answers the members keys does not name, compacted and
// without nulls (jsonextra.Compact): what the tasks service stores and echoes of a task
// does not depend on the spacing it was sent with.
func unmarshal(b []byte, known any, keys []string) (map[string]json.RawMessage, error) {
	all, err := jsonextra.Unmarshal(b, known, keys)
	if err != nil {
		return nil, err
	}
	return jsonextra.Compact(all)
}

package events

import (
	"encoding/json"
	"time"
)

// Run message types.
const (
	// TypeRunRequested asks the runs service for a run; data is RunRequest. Published on
	// RunRequests keyed by the request's idempotency key; subject
	// "/team/<team>/workflow/<name>".
	TypeRunRequested = "io.baton.run.requested"
	// TypeStatusWorkflowRun is a run's status change, published by the runs service on
	// RunEvents keyed by run id, for delivery to the HTTP sinks of settings (API.md §7).
	// Subject "/workflowrun/<id>/status/<status>"; data the run as WorkflowRun (without
	// its tasks), secrets masked; id "<runId>/<status>/<phase>".
	TypeStatusWorkflowRun = "io.baton.event.status.workflowrun"
	// TypeStatusTaskRun is a task run's status change, published like
	// TypeStatusWorkflowRun, keyed by its run's id. Subject
	// "/workflowrun/<runId>/taskrun/<id>/status/<status>"; data the task run as TaskRun,
	// secrets masked; id "<taskRunId>/<attempt>/<status>".
	TypeStatusTaskRun = "io.baton.event.status.taskrun"
)

// TimeFormat is the contract's format of the times WorkflowRun and TaskRun carry as text:
// UTC, milliseconds always written.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// WorkflowRun is the contract's WorkflowRun (API.md §3): the data of TypeStatusWorkflowRun,
// and the body the API answers for a run.
type WorkflowRun struct {
	ID                  string `json:"id"`
	WorkflowRef         string `json:"workflowRef"`
	WorkflowName        string `json:"workflowName"`
	WorkflowDisplayName string `json:"workflowDisplayName,omitempty"`
	WorkflowVersion     int    `json:"workflowVersion"`
	Team                string `json:"team"`
	// Status is notstarted, ready, running, waiting, succeeded, failed, invalid, skipped,
	// cancelled or timedout; Phase is pending, queued, running, completed or finalized.
	Status        string `json:"status"`
	Phase         string `json:"phase"`
	StatusMessage string `json:"statusMessage,omitempty"`
	// Trigger is manual, schedule, webhook, event, codehost, chat, task or retry.
	Trigger     string    `json:"trigger"`
	InitiatedBy Initiator `json:"initiatedBy"`
	// InitiatedByRef and InitiatedByUserName repeat InitiatedBy's id and name under v4's
	// names, for clients written for it.
	InitiatedByRef      string            `json:"initiatedByRef,omitempty"`
	InitiatedByUserName string            `json:"initiatedByUserName,omitempty"`
	Labels              map[string]string `json:"labels"`
	Annotations         map[string]any    `json:"annotations"`
	// Params and Results are listed in name order.
	Params     []NameValue     `json:"params"`
	Results    []NameValue     `json:"results"`
	Workspaces json.RawMessage `json:"workspaces,omitempty"`
	// CreationDate and StartTime are in TimeFormat; StartTime is empty until the run starts.
	CreationDate string `json:"creationDate"`
	StartTime    string `json:"startTime,omitempty"`
	// Duration is in milliseconds, Timeout in minutes.
	Duration         int64  `json:"duration"`
	Timeout          int    `json:"timeout"`
	Retries          int    `json:"retries"`
	AwaitingApproval bool   `json:"awaitingApproval"`
	RetryOf          string `json:"retryOf,omitempty"`
	ParentRun        string `json:"parentRun,omitempty"`
	// RootRun is the top of the run's tree of child runs (its own id at the top), Depth how
	// far below it the run is.
	RootRun string `json:"rootRun"`
	Depth   int    `json:"depth"`
	// Tasks are the run's task runs; status events leave them out.
	Tasks []TaskRun `json:"tasks,omitempty"`
}

// TaskRun is the contract's TaskRun (API.md §3): the data of TypeStatusTaskRun, and the
// body the API answers for a task run.
type TaskRun struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	// Status and Phase take the values of WorkflowRun's.
	Status         string `json:"status"`
	Phase          string `json:"phase"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	WorkflowRunRef string `json:"workflowRunRef"`
	// TaskRef and TaskVersion name the catalogue task a task run of one runs.
	TaskRef     string      `json:"taskRef,omitempty"`
	TaskVersion int         `json:"taskVersion,omitempty"`
	Params      []NameValue `json:"params"`
	Results     []NameValue `json:"results"`
	// CreationDate and StartTime are in TimeFormat; Duration is in milliseconds, Timeout
	// in minutes.
	CreationDate string            `json:"creationDate"`
	StartTime    string            `json:"startTime,omitempty"`
	Duration     int64             `json:"duration"`
	Timeout      int               `json:"timeout,omitempty"`
	Attempt      int               `json:"attempt"`
	Labels       map[string]string `json:"labels,omitempty"`
	Annotations  map[string]any    `json:"annotations,omitempty"`
	// ChildRun is the run a runworkflow task started.
	ChildRun string `json:"workflowRunChildRef,omitempty"`
}

// Initiator says who started a run: a principal's type, id and display name.
type Initiator struct {
	Type string `json:"type,omitempty"`
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

// NameValue is one named value of a run or a task run, as the contract lists params and
// results (v4's RunParam and RunResult).
type NameValue struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

// RunRequest is the data of TypeRunRequested: a run asked for by one of Baton's own
// services rather than by an API client (schedule fires, chat commands). The runs service
// submits it as it would a WorkflowSubmitRequest (API.md §3) with the given trigger and
// initiator.
//
// IdempotencyKey makes a request that is delivered or sent twice create one run: the runs
// service keeps a key per (team, workflow) for 24 hours, as it does for submits over HTTP,
// and the message's key on RunRequests is the same key. A schedule's fire uses
// `<scheduleId>@<fireTime>` (API.md §6; ARCHITECTURE.md, Schedules), e.g.
// "6650c0ffee00000000000c01@2025-03-14T15:00:00Z", so the replica that re-submits a fire
// after another died mid-fire asks for the same run. The event's id is derived from team,
// workflow and key ("run-requested-<team>/<workflow>/<key>"), so consumers also drop a
// re-published message by id.
//
// Nothing publishes or consumes it yet. Schedules submit their fires over HTTP instead
// (runsapi.SubmitRun): a fire needs its run's id at once, for its overlap policy.
type RunRequest struct {
	Team     string `json:"team"`
	Workflow string `json:"workflow"`
	// WorkflowVersion pins the version to run; zero runs the latest.
	WorkflowVersion int `json:"workflowVersion,omitempty"`
	// Params are values by parameter name, over the workflow's defaults.
	Params map[string]any    `json:"params,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	// Trigger is the run's trigger: schedule or chat (API.md §3, WorkflowRun).
	Trigger        string    `json:"trigger"`
	IdempotencyKey string    `json:"idempotencyKey"`
	InitiatedBy    Initiator `json:"initiatedBy"`
	// RequestedAt is when the request was made: for a schedule, the fire time.
	RequestedAt time.Time `json:"requestedAt"`
}

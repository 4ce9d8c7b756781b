package events

import (
	"encoding/json"
	"fmt"
	"time"
)

// Engine message types. The runs service publishes task-run attempts on TaskDispatch (or,
// for `generic` tasks, on the task's queue topic, QueueTopic) keyed by run id; runners and
// external workers report logs and ends on TaskUpdates, keyed by run id too, so one run's
// reports stay in order. Claims and heartbeats do not travel on Kafka: a runner asks for
// them over HTTP (POST /internal/v1/taskruns/{id}/claim and /heartbeat on the runs
// service), because it needs the answer (claimed or not; cancel or go on).
const (
	// TypeTaskDispatch is one attempt of a task run to execute; data is TaskAttempt. Its id
	// is "<taskRunId>/<attempt>".
	TypeTaskDispatch = "io.baton.task.dispatch"
	// TypeTaskUpdate is a report on an attempt; data is TaskUpdate. Its id is
	// "<taskRunId>/<attempt>/log/<seq>" for a log chunk, "<taskRunId>/<attempt>/ended" for
	// the end.
	TypeTaskUpdate = "io.baton.task.update"
)

// TaskAttempt asks a runner to execute one attempt of a task run. Everything the runner
// needs travels in it: parameters are already resolved, so a runner calls no service but
// the runs service's claim and heartbeat endpoints.
type TaskAttempt struct {
	TaskRunID string `json:"taskRunId"`
	RunID     string `json:"runId"`
	Team      string `json:"team"`
	Workflow  string `json:"workflow"`
	// Name and Type are the workflow task's.
	Name string `json:"name"`
	Type string `json:"type"`
	// Attempt counts from 1; a runner claims exactly this attempt.
	Attempt int `json:"attempt"`
	// Deadline is when the attempt times out; the runner kills it then.
	Deadline time.Time `json:"deadline"`
	Spec     TaskSpec  `json:"spec"`
	// Results are the names of the results the step may write, each to the file
	// `$(results.<name>.path)` was replaced with.
	Results []string `json:"results,omitempty"`
	// Secrets are values the runner masks in logs.
	Secrets []string `json:"secrets,omitempty"`
	// Queue is the queue of a `generic` task.
	Queue string `json:"queue,omitempty"`
	// Params are the task's resolved params, for `generic` workers.
	Params map[string]any `json:"params,omitempty"`
	// Sealed, when set, holds Spec, Params and Secrets sealed together under the shared
	// secret key (libs/secrets, BATON_SECRET_KEY), those fields being left empty: an
	// attempt carrying a secret never crosses the broker in clear. Open restores them.
	Sealed string `json:"sealed,omitempty"`
}

// Sealer seals and opens values; *secrets.Box (libs/secrets) is one.
type Sealer interface {
	Seal(plain string) (string, error)
	Open(sealed string) (string, error)
}

// sealedAttempt is the part of a TaskAttempt that Seal moves into Sealed.
type sealedAttempt struct {
	Spec    TaskSpec       `json:"spec"`
	Params  map[string]any `json:"params,omitempty"`
	Secrets []string       `json:"secrets,omitempty"`
}

// Seal moves a's Spec, Params and Secrets into Sealed.
func (a *TaskAttempt) Seal(s Sealer) error {
	raw, err := json.Marshal(sealedAttempt{Spec: a.Spec, Params: a.Params, Secrets: a.Secrets})
	if err != nil {
		return fmt.Errorf("seal attempt %s/%d: %w", a.TaskRunID, a.Attempt, err)
	}
	sealed, err := s.Seal(string(raw))
	if err != nil {
		return fmt.Errorf("seal attempt %s/%d: %w", a.TaskRunID, a.Attempt, err)
	}
	a.Sealed, a.Spec, a.Params, a.Secrets = sealed, TaskSpec{}, nil, nil
	return nil
}

// Opened returns a copy of a with what Seal moved into Sealed back in its fields; an
// attempt that is not sealed is returned as it is.
func (a TaskAttempt) Opened(s Sealer) (TaskAttempt, error) {
	if a.Sealed == "" {
		return a, nil
	}
	if s == nil {
		return a, fmt.Errorf("attempt %s/%d is sealed and no secret key is configured", a.TaskRunID, a.Attempt)
	}
	plain, err := s.Open(a.Sealed)
	if err != nil {
		return a, fmt.Errorf("open attempt %s/%d: %w", a.TaskRunID, a.Attempt, err)
	}
	var in sealedAttempt
	if err := json.Unmarshal([]byte(plain), &in); err != nil {
		return a, fmt.Errorf("open attempt %s/%d: %w", a.TaskRunID, a.Attempt, err)
	}
	a.Spec, a.Params, a.Secrets, a.Sealed = in.Spec, in.Params, in.Secrets, ""
	return a, nil
}

// TaskSpec is the step a runner executes: a script through a shell, or a command with
// arguments. Image is honoured by container executors and ignored by `process`.
type TaskSpec struct {
	Image      string   `json:"image,omitempty"`
	Command    []string `json:"command,omitempty"`
	Args       []string `json:"args,omitempty"`
	Script     string   `json:"script,omitempty"`
	Shell      string   `json:"shell,omitempty"`
	WorkingDir string   `json:"workingDir,omitempty"`
	Env        []EnvVar `json:"env,omitempty"`
}

// EnvVar is one environment variable of a step.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// TaskUpdate kinds.
const (
	// UpdateLog carries a chunk of the attempt's output.
	UpdateLog = "log"
	// UpdateEnded carries the attempt's end: status, exit code, results.
	UpdateEnded = "ended"
)

// TaskUpdate is a runner's (or an external worker's) report on an attempt.
type TaskUpdate struct {
	TaskRunID string `json:"taskRunId"`
	RunID     string `json:"runId"`
	Attempt   int    `json:"attempt"`
	Kind      string `json:"kind"`
	// Runner names the runner instance that executes the attempt.
	Runner string `json:"runner,omitempty"`
	// Seq orders an attempt's log chunks from 0; Log is the chunk, already masked.
	Seq int    `json:"seq,omitempty"`
	Log string `json:"log,omitempty"`
	// Status ends the attempt: succeeded, failed, timedout or cancelled.
	Status   string            `json:"status,omitempty"`
	ExitCode *int              `json:"exitCode,omitempty"`
	Message  string            `json:"message,omitempty"`
	Results  map[string]string `json:"results,omitempty"`
	Time     time.Time         `json:"time"`
}

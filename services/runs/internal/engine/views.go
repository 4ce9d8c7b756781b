package engine

import (
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// TimeFormat is the contract's format for times in bodies.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// mask is what a secret value reads as in answers and events.
const mask = "********"

// RunView is the contract's WorkflowRun.
type RunView struct {
	ID                  string            `json:"id"`
	WorkflowRef         string            `json:"workflowRef"`
	WorkflowName        string            `json:"workflowName"`
	WorkflowDisplayName string            `json:"workflowDisplayName,omitempty"`
	WorkflowVersion     int               `json:"workflowVersion"`
	Team                string            `json:"team"`
	Status              domain.Status     `json:"status"`
	Phase               domain.Phase      `json:"phase"`
	StatusMessage       string            `json:"statusMessage,omitempty"`
	Trigger             string            `json:"trigger"`
	InitiatedBy         domain.Initiator  `json:"initiatedBy"`
	Labels              map[string]string `json:"labels"`
	Annotations         map[string]any    `json:"annotations"`
	Params              map[string]any    `json:"params"`
	Results             map[string]any    `json:"results"`
	Workspaces          json.RawMessage   `json:"workspaces,omitempty"`
	CreationDate        string            `json:"creationDate"`
	StartTime           string            `json:"startTime,omitempty"`
	Duration            int64             `json:"duration"`
	Timeout             int               `json:"timeout"`
	Retries             int               `json:"retries"`
	AwaitingApproval    bool              `json:"awaitingApproval"`
	RetryOf             string            `json:"retryOf,omitempty"`
	ParentRun           string            `json:"parentRun,omitempty"`
	Tasks               []TaskRunView     `json:"tasks,omitempty"`
}

// TaskRunView is the contract's TaskRun.
type TaskRunView struct {
	ID             string            `json:"id"`
	Name           string            `json:"name"`
	Type           string            `json:"type"`
	Status         domain.Status     `json:"status"`
	Phase          domain.Phase      `json:"phase"`
	StatusMessage  string            `json:"statusMessage,omitempty"`
	WorkflowRunRef string            `json:"workflowRunRef"`
	TaskRef        string            `json:"taskRef,omitempty"`
	TaskVersion    int               `json:"taskVersion,omitempty"`
	Params         map[string]any    `json:"params"`
	Results        map[string]string `json:"results"`
	CreationDate   string            `json:"creationDate"`
	StartTime      string            `json:"startTime,omitempty"`
	Duration       int64             `json:"duration"`
	Timeout        int               `json:"timeout,omitempty"`
	Attempt        int               `json:"attempt"`
	Labels         map[string]string `json:"labels,omitempty"`
	Annotations    map[string]any    `json:"annotations,omitempty"`
	// ChildRun is the run a runworkflow task started.
	ChildRun string `json:"workflowRunChildRef,omitempty"`
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(TimeFormat)
}

// secretParams names the run params of password type.
func secretParams(r *domain.Run) map[string]bool {
	out := map[string]bool{}
	for _, name := range r.SecretParams {
		out[name] = true
	}
	return out
}

// ViewRun renders a run, secrets masked, with tasks when given.
func ViewRun(r *domain.Run, tasks []*domain.TaskRun, now time.Time) RunView {
	params := maps.Clone(r.Params)
	for name := range secretParams(r) {
		if _, ok := params[name]; ok {
			params[name] = mask
		}
	}
	v := RunView{
		ID: r.ID, WorkflowRef: r.Workflow, WorkflowName: r.Workflow, WorkflowDisplayName: r.WorkflowDisplayName,
		WorkflowVersion: r.WorkflowVersion, Team: r.Team, Status: r.Status, Phase: r.Phase, StatusMessage: r.StatusMessage,
		Trigger: r.Trigger, InitiatedBy: r.InitiatedBy, Labels: orEmpty(r.Labels), Annotations: orEmptyAny(r.Annotations),
		Params: orEmptyAny(params), Results: orEmptyAny(maskAll(r.Results, r.Context.Secrets)), Workspaces: r.Workspaces,
		CreationDate: fmtTime(r.CreationDate), StartTime: fmtTime(r.StartTime), Duration: r.Duration(now),
		Timeout: r.Timeout, Retries: r.Retries, RetryOf: r.RetryOf, ParentRun: r.ParentRun,
	}
	if tasks != nil {
		v.Tasks = make([]TaskRunView, len(tasks))
		for i, t := range tasks {
			v.Tasks[i] = ViewTask(r, t, now)
		}
	}
	return v
}

// ViewTask renders a task run, secrets masked.
func ViewTask(r *domain.Run, t *domain.TaskRun, now time.Time) TaskRunView {
	return TaskRunView{
		ID: t.ID, Name: t.Name, Type: t.Type, Status: t.Status, Phase: t.Phase(), StatusMessage: t.StatusMessage,
		WorkflowRunRef: t.RunID, TaskRef: t.TaskRef, TaskVersion: t.TaskVersion,
		Params: orEmptyAny(maskAll(t.Params, r.Context.Secrets)), Results: orEmpty(t.Results),
		CreationDate: fmtTime(t.CreationDate), StartTime: fmtTime(t.StartTime), Duration: t.Duration(now),
		Timeout: t.Timeout, Attempt: t.Attempt, Labels: t.Labels, ChildRun: t.Child,
	}
}

// maskAll replaces secret values found in string values.
func maskAll(m map[string]any, secrets []string) map[string]any {
	if len(secrets) == 0 || len(m) == 0 {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			for _, sec := range secrets {
				if sec != "" {
					s = strings.ReplaceAll(s, sec, mask)
				}
			}
			v = s
		}
		out[k] = v
	}
	return out
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func orEmptyAny(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// runEvent is the status event of the run's current status (API.md §7). Its id names the
// run, status and phase, so a re-publish after a takeover is dropped as a duplicate.
func (e *Engine) runEvent(st *domain.State) message {
	r := st.Run
	v := ViewRun(r, nil, e.now())
	id := r.ID + "/" + string(r.Status) + "/" + string(r.Phase)
	ev, err := events.New(id, events.Source("runs"), events.TypeStatusWorkflowRun,
		"/workflowrun/"+r.ID+"/status/"+string(r.Status), v)
	if err != nil {
		e.log.Error("cannot build run event", "run", r.ID, "error", err)
	}
	return message{topic: events.RunEvents, key: r.ID, event: ev}
}

func (e *Engine) taskEvent(st *domain.State, t *domain.TaskRun) message {
	v := ViewTask(st.Run, t, e.now())
	id := t.ID + "/" + strconv.Itoa(t.Attempt) + "/" + string(t.Status)
	ev, err := events.New(id, events.Source("runs"), events.TypeStatusTaskRun,
		"/workflowrun/"+t.RunID+"/taskrun/"+t.ID+"/status/"+string(t.Status), v)
	if err != nil {
		e.log.Error("cannot build task run event", "taskRun", t.ID, "error", err)
	}
	return message{topic: events.RunEvents, key: t.RunID, event: ev}
}

// attempt is the dispatch of task i's current attempt.
func (e *Engine) attempt(st *domain.State, i int) (message, error) {
	m := domain.NewMachine(st, e.now())
	step, err := m.Step(i)
	if err != nil {
		return message{}, err
	}
	t := st.Tasks[i]
	r := st.Run
	a := events.TaskAttempt{
		TaskRunID: t.ID, RunID: r.ID, Team: r.Team, Workflow: r.Workflow, Name: t.Name, Type: t.Type,
		Attempt: t.Attempt, Deadline: t.Deadline, Results: step.Results, Secrets: r.Context.Secrets,
		Spec: events.TaskSpec{Image: step.Image, Command: step.Command, Args: step.Args, Script: step.Script,
			Shell: step.Shell, WorkingDir: step.WorkingDir},
	}
	for _, env := range step.Env {
		a.Spec.Env = append(a.Spec.Env, events.EnvVar{Name: env.Name, Value: env.Value})
	}
	topic := events.TaskDispatch
	if t.Type == tasktype.Generic {
		a.Queue, a.Params = step.Queue, step.Params
		topic = events.QueueTopic(step.Queue)
	}
	ev, err := events.New(t.ID+"/"+strconv.Itoa(t.Attempt), events.Source("runs"), events.TypeTaskDispatch, "", a)
	if err != nil {
		return message{}, err
	}
	return message{topic: topic, key: r.ID, event: ev}, nil
}

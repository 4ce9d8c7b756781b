// Package view renders runs and task runs as the contract shows them (WorkflowRun and
// TaskRun), in answers and in status events alike, with every secret masked.
package view

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// TimeFormat is the contract's format for times in bodies.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// mask is what a secret value reads as in answers and events.
const mask = secrets.Mask

// Run is the contract's WorkflowRun.
type Run struct {
	ID                  string           `json:"id"`
	WorkflowRef         string           `json:"workflowRef"`
	WorkflowName        string           `json:"workflowName"`
	WorkflowDisplayName string           `json:"workflowDisplayName,omitempty"`
	WorkflowVersion     int              `json:"workflowVersion"`
	Team                string           `json:"team"`
	Status              domain.Status    `json:"status"`
	Phase               domain.Phase     `json:"phase"`
	StatusMessage       string           `json:"statusMessage,omitempty"`
	Trigger             string           `json:"trigger"`
	InitiatedBy         domain.Initiator `json:"initiatedBy"`
	// InitiatedByRef and InitiatedByUserName repeat initiatedBy's id and name under v4's
	// names, for clients written for it.
	InitiatedByRef      string             `json:"initiatedByRef,omitempty"`
	InitiatedByUserName string             `json:"initiatedByUserName,omitempty"`
	Labels              map[string]string  `json:"labels"`
	Annotations         map[string]any     `json:"annotations"`
	Params              []domain.NameValue `json:"params"`
	Results             []domain.NameValue `json:"results"`
	Workspaces          json.RawMessage    `json:"workspaces,omitempty"`
	CreationDate        string             `json:"creationDate"`
	StartTime           string             `json:"startTime,omitempty"`
	Duration            int64              `json:"duration"`
	Timeout             int                `json:"timeout"`
	Retries             int                `json:"retries"`
	AwaitingApproval    bool               `json:"awaitingApproval"`
	RetryOf             string             `json:"retryOf,omitempty"`
	ParentRun           string             `json:"parentRun,omitempty"`
	RootRun             string             `json:"rootRun"` // the top of its tree of child runs
	Depth               int                `json:"depth"`   // how far below RootRun
	Tasks               []TaskRun          `json:"tasks,omitempty"`
}

// TaskRun is the contract's TaskRun.
type TaskRun struct {
	ID             string             `json:"id"`
	Name           string             `json:"name"`
	Type           string             `json:"type"`
	Status         domain.Status      `json:"status"`
	Phase          domain.Phase       `json:"phase"`
	StatusMessage  string             `json:"statusMessage,omitempty"`
	WorkflowRunRef string             `json:"workflowRunRef"`
	TaskRef        string             `json:"taskRef,omitempty"`
	TaskVersion    int                `json:"taskVersion,omitempty"`
	Params         []domain.NameValue `json:"params"`
	Results        []domain.NameValue `json:"results"`
	CreationDate   string             `json:"creationDate"`
	StartTime      string             `json:"startTime,omitempty"`
	Duration       int64              `json:"duration"`
	Timeout        int                `json:"timeout,omitempty"`
	Attempt        int                `json:"attempt"`
	Labels         map[string]string  `json:"labels,omitempty"`
	Annotations    map[string]any     `json:"annotations,omitempty"`
	// ChildRun is the run a runworkflow task started.
	ChildRun string `json:"workflowRunChildRef,omitempty"`
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(TimeFormat)
}

// ViewRun renders a run, secrets masked, with tasks when given.
func OfRun(r *domain.Run, tasks []*domain.TaskRun, now time.Time) Run {
	known := r.Context.Secrets
	v := Run{
		ID: r.ID, WorkflowRef: r.Workflow, WorkflowName: r.Workflow, WorkflowDisplayName: r.WorkflowDisplayName,
		WorkflowVersion: r.WorkflowVersion, Team: r.Team, Status: r.Status, Phase: r.Phase, StatusMessage: r.Scrub(r.StatusMessage),
		Trigger: r.Trigger, InitiatedBy: r.InitiatedBy, InitiatedByRef: r.InitiatedBy.ID,
		InitiatedByUserName: r.InitiatedBy.Name, Labels: orEmpty(r.Labels), Annotations: orEmptyAny(r.Annotations),
		Params:     domain.NameValues(maskValues(r.Params, r.SecretParams, known)),
		Results:    domain.NameValues(maskValues(r.Results, r.SecretResults, known)),
		Workspaces: r.Workspaces, CreationDate: fmtTime(r.CreationDate), StartTime: fmtTime(r.StartTime), Duration: r.Duration(now),
		Timeout: r.Timeout, Retries: r.Retries, RetryOf: r.RetryOf, ParentRun: r.ParentRun,
		RootRun: r.Root(), Depth: r.Depth,
	}
	if tasks != nil {
		v.Tasks = make([]TaskRun, len(tasks))
		for i, t := range tasks {
			v.Tasks[i] = OfTask(r, t, now)
		}
	}
	return v
}

// ViewTask renders a task run, secrets masked.
func OfTask(r *domain.Run, t *domain.TaskRun, now time.Time) TaskRun {
	known := r.Context.Secrets
	return TaskRun{
		ID: t.ID, Name: t.Name, Type: t.Type, Status: t.Status, Phase: t.Phase(), StatusMessage: r.Scrub(t.StatusMessage),
		WorkflowRunRef: t.RunID, TaskRef: t.TaskRef, TaskVersion: t.TaskVersion,
		Params:       domain.NameValues(maskValues(t.Params, t.SecretParams, known)),
		Results:      domain.NameValues(maskTexts(t.Results, t.SecretResults, known)),
		CreationDate: fmtTime(t.CreationDate), StartTime: fmtTime(t.StartTime), Duration: t.Duration(now),
		Timeout: t.Timeout, Attempt: t.Attempt, Labels: t.Labels, ChildRun: t.Child,
	}
}

// maskValues masks a map of values for showing: the values named secret (they came from
// a secret) whole, and in every other string, however deep, any secret value it holds.
func maskValues(m map[string]any, secret []string, values []string) map[string]any {
	if len(m) == 0 || (len(secret) == 0 && len(values) == 0) {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if slices.Contains(secret, k) {
			out[k] = mask
			continue
		}
		out[k] = scrubValue(v, values)
	}
	return out
}

// maskTexts is maskValues for text values.
func maskTexts(m map[string]string, secret []string, values []string) map[string]string {
	if len(m) == 0 || (len(secret) == 0 && len(values) == 0) {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if slices.Contains(secret, k) {
			out[k] = mask
			continue
		}
		out[k] = domain.ScrubText(v, values)
	}
	return out
}

// scrubValue masks the secret values found in the strings of a JSON value.
func scrubValue(v any, values []string) any {
	if len(values) == 0 {
		return v
	}
	switch c := v.(type) {
	case string:
		return domain.ScrubText(c, values)
	case map[string]any:
		out := make(map[string]any, len(c))
		for k, e := range c {
			out[k] = scrubValue(e, values)
		}
		return out
	case []any:
		out := make([]any, len(c))
		for i, e := range c {
			out[i] = scrubValue(e, values)
		}
		return out
	default:
		return v
	}
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

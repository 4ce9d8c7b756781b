// Package view renders runs and task runs as the contract shows them (WorkflowRun and
// TaskRun), in answers and in status events alike, with every secret masked.
package view

import (
	"maps"
	"slices"
	"time"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// TimeFormat is the contract's format for times in bodies.
const TimeFormat = events.TimeFormat

// mask is what a secret value reads as in answers and events.
const mask = secrets.Mask

// Run and TaskRun are the contract's WorkflowRun and TaskRun, declared once with the
// status events that carry them (libs/events).
type (
	Run     = events.WorkflowRun
	TaskRun = events.TaskRun
)

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(TimeFormat)
}

// OfRun renders a run, secrets masked, with tasks when given.
func OfRun(r *domain.Run, tasks []*domain.TaskRun, now time.Time) Run {
	known := r.Context.Secrets
	v := Run{
		ID: r.ID, WorkflowRef: r.Workflow, WorkflowName: r.Workflow, WorkflowDisplayName: r.WorkflowDisplayName,
		WorkflowVersion: r.WorkflowVersion, Team: r.Team, Status: string(r.Status), Phase: string(r.Phase), StatusMessage: r.Scrub(r.StatusMessage),
		Trigger: r.Trigger, InitiatedBy: events.Initiator{Type: r.InitiatedBy.Type, ID: r.InitiatedBy.ID, Name: r.InitiatedBy.Name}, InitiatedByRef: r.InitiatedBy.ID,
		InitiatedByUserName: r.InitiatedBy.Name, Labels: orEmpty(r.Labels), Annotations: orEmptyAny(domain.VisibleAnnotations(r.Annotations)),
		Params:     nameValues(maskValues(r.Params, r.SecretParams, known)),
		Results:    nameValues(maskValues(r.Results, r.SecretResults, known)),
		Workspaces: r.Workspaces, CreationDate: fmtTime(r.CreationDate), StartTime: fmtTime(r.StartTime), Duration: r.Duration(now),
		Timeout: r.Timeout, Retries: r.Retries, RetryOf: r.RetryOf, ParentRun: r.ParentRun,
		RootRun: r.Root(), Depth: r.Depth, AwaitingApproval: r.AwaitingApproval,
	}
	if tasks != nil {
		v.Tasks = make([]TaskRun, len(tasks))
		for i, t := range tasks {
			v.Tasks[i] = OfTask(r, t, now)
		}
	}
	return v
}

// OfTask renders a task run, secrets masked.
func OfTask(r *domain.Run, t *domain.TaskRun, now time.Time) TaskRun {
	known := r.Context.Secrets
	return TaskRun{
		ID: t.ID, Name: t.Name, Type: t.Type, Status: string(t.Status), Phase: string(t.Phase()), StatusMessage: r.Scrub(t.StatusMessage),
		WorkflowRunRef: t.RunID, TaskRef: t.TaskRef, TaskVersion: t.TaskVersion,
		Params:       nameValues(maskValues(t.Params, t.SecretParams, known)),
		Results:      nameValues(maskTexts(t.Results, t.SecretResults, known)),
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

// nameValues lists m's values by name, in name order so answers are stable; an empty or
// nil m is an empty list.
func nameValues[V any](m map[string]V) []events.NameValue {
	out := make([]events.NameValue, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, events.NameValue{Name: k, Value: m[k]})
	}
	return out
}

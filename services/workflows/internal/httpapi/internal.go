package httpapi

import (
	"encoding/json"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/workflows/internal/app"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// InternalRoutes registers the endpoints Baton's own services call, on r (/internal/v1),
// which already verifies the signed principal and admits only Baton's own services.
// libs/workflowsapi is their contract:
//
//	GET /internal/v1/teams/{team}/usage  → workflowsapi.TeamUsage                 (identity)
//	GET /internal/v1/task-usage?ref=<team>/<task>|<task> → workflowsapi.TaskUsage  (tasks)
//	GET /internal/v1/teams/{team}/workflows/{name}?version=n
//	                                     → workflowsapi.WorkflowVersion, secrets unmasked (runs)
//	GET /internal/v1/teams/{team}/triggers?kind=<k>[&workflow=<name>]
//	                                     → workflowsapi.TriggeredWorkflows (integrations)
func InternalRoutes(r fiber.Router, workflows *app.Workflows) {
	h := &handlers{workflows: workflows}
	r.Get(workflowsapi.TeamUsageRoute, h.teamUsage)
	r.Get(workflowsapi.TaskUsageRoute, h.taskUsage)
	r.Get(workflowsapi.WorkflowVersionRoute, h.snapshot)
	r.Get(workflowsapi.TriggersRoute, h.triggers)
}

func (h *handlers) triggers(c *fiber.Ctx) error {
	found, err := h.workflows.Triggered(c.UserContext(), c.Params("team"), c.Query("kind"), c.Query("workflow"))
	if err != nil {
		return err
	}
	out := workflowsapi.TriggeredWorkflows{Workflows: make([]workflowsapi.TriggeredWorkflow, len(found))}
	for i, f := range found {
		out.Workflows[i] = workflowsapi.TriggeredWorkflow{Name: f.Name, Status: string(f.Status), Version: f.Version,
			Trigger: *triggerView(&f.Trigger)}
	}
	return c.JSON(out)
}

func (h *handlers) snapshot(c *fiber.Ctx) error {
	v, err := version(c)
	if err != nil {
		return err
	}
	w, err := h.workflows.Snapshot(c.UserContext(), c.Params("team"), c.Params("name"), v)
	if err != nil {
		return err
	}
	return c.JSON(versionView(w))
}

func (h *handlers) teamUsage(c *fiber.Ctx) error {
	n, err := h.workflows.WorkflowCount(c.UserContext(), c.Params("team"))
	if err != nil {
		return err
	}
	return c.JSON(workflowsapi.TeamUsage{CurrentWorkflowCount: n})
}

func (h *handlers) taskUsage(c *fiber.Ctx) error {
	ref := c.Query("ref")
	team, _, ok := strings.Cut(ref, "/")
	if !ok || team == "" {
		return apperr.New(apperr.RequestInvalid, "ref must name a team task as <team>/<task>, got %q.", ref)
	}
	names, err := h.workflows.TaskUsage(c.UserContext(), team, ref)
	if err != nil {
		return err
	}
	return c.JSON(workflowsapi.TaskUsage{Workflows: names})
}

// versionView is w as the contract carries it: the same members, in the same order, as the
// workflow document itself, so its bytes are the document's.
func versionView(w domain.Workflow) workflowsapi.WorkflowVersion {
	out := workflowsapi.WorkflowVersion{
		ID: w.ID, Name: w.Name, DisplayName: w.DisplayName, Team: w.Team, Status: string(w.Status),
		Version: w.Version, CreationDate: timeView(w.CreationDate), Icon: w.Icon, Description: w.Description,
		Markdown: w.Markdown, Labels: w.Labels, Annotations: w.Annotations, Timeout: w.Timeout, Retries: w.Retries,
		Params: w.Params, Workspaces: w.Workspaces, Triggers: triggersView(w.Triggers), Extra: w.Extra,
	}
	if c := w.Changelog; c != nil {
		out.Changelog = &workflowsapi.Changelog{Author: c.Author, Reason: c.Reason, Date: timeView(c.Date)}
	}
	if w.Tasks == nil && len(w.RawTasks) > 0 {
		// A read that left the tasks as stored writes them as they are, as the document does.
		out.Extra = w.Extra.Clone()
		if out.Extra == nil {
			out.Extra = map[string]json.RawMessage{}
		}
		out.Extra["tasks"] = w.RawTasks
	}
	if w.Tasks != nil {
		out.Tasks = make([]workflowsapi.Task, len(w.Tasks))
	}
	for i, t := range w.Tasks {
		out.Tasks[i] = workflowsapi.Task{
			Name: t.Name, Type: t.Type, TaskRef: t.TaskRef, TaskVersion: t.TaskVersion, Timeout: t.Timeout,
			Retries: t.Retries, RetryDelay: t.RetryDelay, Join: t.Join, Results: t.Results, Labels: t.Labels,
			Annotations: t.Annotations, Extra: t.Extra,
		}
		if t.Dependencies != nil {
			out.Tasks[i].Dependencies = make([]workflowsapi.Dependency, len(t.Dependencies))
		}
		for j, d := range t.Dependencies {
			out.Tasks[i].Dependencies[j] = workflowsapi.Dependency{TaskRef: d.TaskRef, ExecutionCondition: d.ExecutionCondition,
				DecisionCondition: d.DecisionCondition, Extra: d.Extra}
		}
		if t.Params != nil {
			out.Tasks[i].Params = make([]workflowsapi.TaskParam, len(t.Params))
		}
		for j, p := range t.Params {
			out.Tasks[i].Params[j] = workflowsapi.TaskParam{Name: p.Name, Value: p.Value}
		}
	}
	return out
}

func timeView(t *domain.Time) *workflowsapi.Time {
	if t == nil {
		return nil
	}
	return &workflowsapi.Time{Time: t.Time}
}

// triggersView writes `github` beside `codehost`, as the document does for older clients.
func triggersView(t *domain.Triggers) *workflowsapi.Triggers {
	if t == nil {
		return nil
	}
	codehost := t.Codehost
	if codehost == nil {
		codehost = t.Github
	}
	return &workflowsapi.Triggers{
		Manual: triggerView(t.Manual), Schedule: triggerView(t.Schedule), Webhook: triggerView(t.Webhook),
		Event: triggerView(t.Event), Codehost: triggerView(codehost), Github: triggerView(codehost), Extra: t.Extra,
	}
}

func triggerView(t *domain.Trigger) *workflowsapi.Trigger {
	if t == nil {
		return nil
	}
	out := &workflowsapi.Trigger{Enabled: t.Enabled}
	if t.Conditions != nil {
		out.Conditions = make([]workflowsapi.Condition, len(t.Conditions))
	}
	for i, c := range t.Conditions {
		out.Conditions[i] = workflowsapi.Condition(c)
	}
	return out
}

// Package workflowsapi is the workflows service's internal contract: the endpoints under
// /internal/v1 that Baton's own services call, their answer types, a typed client, and
// golden fixtures of the JSON (testdata). The workflows service serves these types and its
// callers read them; neither side declares its own copy.
//
//	GET /internal/v1/teams/{team}/usage              → 200 TeamUsage (identity)
//	GET /internal/v1/task-usage?ref=<team>/<task>    → 200 TaskUsage (tasks)
//	GET /internal/v1/teams/{team}/workflows/{name}[?version=n]
//	                                                 → 200 WorkflowVersion (runs)
//	  404 TEAM_NOT_FOUND, WORKFLOW_NOT_FOUND, WORKFLOW_REVISION_NOT_FOUND
//	GET /internal/v1/teams/{team}/triggers?kind=<k>[&workflow=<name>]
//	                                                 → 200 TriggeredWorkflows (integrations)
//	  404 TEAM_NOT_FOUND, WORKFLOW_NOT_FOUND (a named workflow)
//
// Every one answers 403 PERMISSION_DENIED to a caller that is not one of Baton's services.
package workflowsapi

import (
	"net/url"
)

// Service is the name the workflows service registers under in discovery.
const Service = "workflows"

// Prefix is where the internal endpoints live; the routes below are relative to it, in the
// form a router registers (":team" is a path parameter).
const Prefix = "/internal/v1"

// Routes, for the workflows service's router.
const (
	TeamUsageRoute       = "/teams/:team/usage"
	TaskUsageRoute       = "/task-usage"
	WorkflowVersionRoute = "/teams/:team/workflows/:name"
	TriggersRoute        = "/teams/:team/triggers"
)

// TaskUsagePath is the path of the task-usage question, for callers.
const TaskUsagePath = Prefix + TaskUsageRoute

// TeamUsagePath is the path of team's usage.
func TeamUsagePath(team string) string { return Prefix + "/teams/" + url.PathEscape(team) + "/usage" }

// WorkflowVersionPath is the path of a version of team's workflow name.
func WorkflowVersionPath(team, name string) string {
	return Prefix + "/teams/" + url.PathEscape(team) + "/workflows/" + url.PathEscape(name)
}

// TriggersPath is the path of the question which of team's workflows a trigger kind starts.
func TriggersPath(team string) string { return Prefix + "/teams/" + url.PathEscape(team) + "/triggers" }

// Trigger kinds, as TriggersPath's `kind` names them; `github` is read as `codehost`.
const (
	TriggerManual   = "manual"
	TriggerSchedule = "schedule"
	TriggerWebhook  = "webhook"
	TriggerEvent    = "event"
	TriggerCodehost = "codehost"
)

// TriggeredWorkflows is the answer of GET …/triggers: with `workflow`, that workflow and
// its trigger of the kind (disabled when it has none; the manual trigger is on unless
// turned off); without it, every workflow of the team whose trigger of the kind is
// enabled, in name order. Both read the latest versions and list inactive workflows too,
// with their status, for the caller to skip or refuse.
type TriggeredWorkflows struct {
	Workflows []TriggeredWorkflow `json:"workflows"`
}

// TriggeredWorkflow is one workflow and its trigger of the kind asked about.
type TriggeredWorkflow struct {
	Name string `json:"name"`
	// Status is active or inactive.
	Status  string  `json:"status"`
	Version int     `json:"version"`
	Trigger Trigger `json:"trigger"`
}

// TeamUsage is the answer of GET /internal/v1/teams/{team}/usage: the team's use of the
// quota the workflows service counts, for identity's quota views.
type TeamUsage struct {
	CurrentWorkflowCount int `json:"currentWorkflowCount"`
}

// TaskUsage is the answer of GET /internal/v1/task-usage?ref=<team>/<task>: the names of
// the team's workflows whose latest version references the task; [] when none. A task in
// use is not deleted.
type TaskUsage struct {
	Workflows []string `json:"workflows"`
}

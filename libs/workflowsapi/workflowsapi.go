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
)

// TaskUsagePath is the path of the task-usage question, for callers.
const TaskUsagePath = Prefix + TaskUsageRoute

// TeamUsagePath is the path of team's usage.
func TeamUsagePath(team string) string { return Prefix + "/teams/" + url.PathEscape(team) + "/usage" }

// WorkflowVersionPath is the path of a version of team's workflow name.
func WorkflowVersionPath(team, name string) string {
	return Prefix + "/teams/" + url.PathEscape(team) + "/workflows/" + url.PathEscape(name)
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

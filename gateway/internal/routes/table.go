package routes

import "github.com/baton-flow/baton/libs/httpx"

// The services routes are proxied to, named as they register in discovery.
const (
	Identity     = "identity"
	Workflows    = "workflows"
	Tasks        = "tasks"
	Runs         = "runs"
	Schedules    = "schedules"
	Integrations = "integrations"
)

const (
	get   = "GET"
	post  = "POST"
	put   = "PUT"
	patch = "PATCH"
	del   = "DELETE"

	// large is the limit for workflow, template and canvas bodies (API.md §1).
	large = httpx.LargeBodyLimit
)

// declared is the whole /api/v2 surface: every method and path of the seed, each owned by
// one service (ARCHITECTURE.md), then the v4 compatibility paths (API.md §1). Routes without
// a BodyLimit get httpx.DefaultBodyLimit.
//
// GET /api/v2/openapi.yaml and GET /api/v2/docs are left out on purpose: the gateway serves
// them itself once the spec exists, and until then they answer 404 like any unknown path.
var declared = []Route{
	// Workflows.
	{Method: put, Pattern: "/api/v2/team/{team}/workflow/{name}/compose", Service: Workflows, BodyLimit: large},
	{Method: get, Pattern: "/api/v2/team/{team}/workflow/{name}/compose", Service: Workflows},
	{Method: put, Pattern: "/api/v2/team/{team}/workflow", Service: Workflows, BodyLimit: large},
	{Method: post, Pattern: "/api/v2/team/{team}/workflow", Service: Workflows, BodyLimit: large},
	{Method: get, Pattern: "/api/v2/team/{team}/workflow/query", Service: Workflows},
	{Method: get, Pattern: "/api/v2/team/{team}/workflow/{name}", Service: Workflows},
	{Method: del, Pattern: "/api/v2/team/{team}/workflow/{name}", Service: Workflows},
	{Method: post, Pattern: "/api/v2/team/{team}/workflow/{name}/duplicate", Service: Workflows},
	{Method: get, Pattern: "/api/v2/team/{team}/workflow/{name}/export", Service: Workflows},
	{Method: get, Pattern: "/api/v2/team/{team}/workflow/{name}/available-parameters", Service: Workflows},
	{Method: get, Pattern: "/api/v2/team/{team}/workflow/{name}/changelog", Service: Workflows},
	{Method: post, Pattern: "/api/v2/team/{team}/workflow/{name}/submit", Service: Runs},

	// Workflow runs.
	{Method: get, Pattern: "/api/v2/team/{team}/workflowrun/count", Service: Runs},
	{Method: get, Pattern: "/api/v2/team/{team}/workflowrun/query", Service: Runs},
	{Method: get, Pattern: "/api/v2/team/{team}/workflowrun/{workflowRunId}", Service: Runs},
	{Method: del, Pattern: "/api/v2/team/{team}/workflowrun/{workflowRunId}/cancel", Service: Runs},
	{Method: put, Pattern: "/api/v2/team/{team}/workflowrun/{workflowRunId}/finalize", Service: Runs},
	{Method: put, Pattern: "/api/v2/team/{team}/workflowrun/{workflowRunId}/retry", Service: Runs},
	{Method: put, Pattern: "/api/v2/team/{team}/workflowrun/{workflowRunId}/start", Service: Runs},

	// Task runs.
	{Method: get, Pattern: "/api/v2/taskrun/{taskRunId}/log", Service: Runs, Streaming: true},

	// Tasks, team-scoped.
	{Method: post, Pattern: "/api/v2/team/{team}/task", Service: Tasks},
	{Method: get, Pattern: "/api/v2/team/{team}/task/query", Service: Tasks},
	{Method: post, Pattern: "/api/v2/team/{team}/task/validate", Service: Tasks},
	{Method: get, Pattern: "/api/v2/team/{team}/task/{name}", Service: Tasks},
	{Method: put, Pattern: "/api/v2/team/{team}/task/{name}", Service: Tasks},
	{Method: del, Pattern: "/api/v2/team/{team}/task/{name}", Service: Tasks},
	{Method: get, Pattern: "/api/v2/team/{team}/task/{name}/changelog", Service: Tasks},

	// Tasks, global (no delete).
	{Method: post, Pattern: "/api/v2/task", Service: Tasks},
	{Method: get, Pattern: "/api/v2/task/query", Service: Tasks},
	{Method: post, Pattern: "/api/v2/task/validate", Service: Tasks},
	{Method: get, Pattern: "/api/v2/task/{name}", Service: Tasks},
	{Method: put, Pattern: "/api/v2/task/{name}", Service: Tasks},
	{Method: get, Pattern: "/api/v2/task/{name}/changelog", Service: Tasks},

	// Workflow templates.
	{Method: put, Pattern: "/api/v2/workflowtemplate", Service: Workflows, BodyLimit: large},
	{Method: post, Pattern: "/api/v2/workflowtemplate", Service: Workflows, BodyLimit: large},
	{Method: get, Pattern: "/api/v2/workflowtemplate/query", Service: Workflows},
	{Method: get, Pattern: "/api/v2/workflowtemplate/{name}", Service: Workflows},
	{Method: del, Pattern: "/api/v2/workflowtemplate/{name}", Service: Workflows},

	// Schedules.
	{Method: post, Pattern: "/api/v2/team/{team}/schedule", Service: Schedules},
	{Method: put, Pattern: "/api/v2/team/{team}/schedule", Service: Schedules},
	{Method: get, Pattern: "/api/v2/team/{team}/schedule/calendars", Service: Schedules},
	{Method: get, Pattern: "/api/v2/team/{team}/schedule/query", Service: Schedules},
	{Method: get, Pattern: "/api/v2/team/{team}/schedule/validate-cron", Service: Schedules},
	{Method: get, Pattern: "/api/v2/team/{team}/schedule/{scheduleId}", Service: Schedules},
	{Method: del, Pattern: "/api/v2/team/{team}/schedule/{scheduleId}", Service: Schedules},

	// Actions.
	{Method: put, Pattern: "/api/v2/team/{team}/action", Service: Runs},
	{Method: get, Pattern: "/api/v2/team/{team}/action/query", Service: Runs},
	{Method: get, Pattern: "/api/v2/team/{team}/action/summary", Service: Runs},
	{Method: get, Pattern: "/api/v2/team/{team}/action/{actionId}", Service: Runs},

	// Insights.
	{Method: get, Pattern: "/api/v2/team/{team}/insights", Service: Runs},

	// Teams.
	{Method: post, Pattern: "/api/v2/team", Service: Identity},
	{Method: get, Pattern: "/api/v2/team/query", Service: Identity},
	{Method: get, Pattern: "/api/v2/team/roles", Service: Identity},
	{Method: get, Pattern: "/api/v2/team/quotas/default", Service: Identity},
	{Method: post, Pattern: "/api/v2/team/validate-name", Service: Identity},
	{Method: get, Pattern: "/api/v2/team/{team}", Service: Identity},
	{Method: patch, Pattern: "/api/v2/team/{team}", Service: Identity},
	{Method: del, Pattern: "/api/v2/team/{team}", Service: Identity},
	{Method: del, Pattern: "/api/v2/team/{team}/approvers", Service: Identity},
	{Method: del, Pattern: "/api/v2/team/{team}/parameters/{name}", Service: Identity},
	{Method: del, Pattern: "/api/v2/team/{team}/leave", Service: Identity},
	{Method: del, Pattern: "/api/v2/team/{team}/members", Service: Identity},
	{Method: del, Pattern: "/api/v2/team/{team}/quotas", Service: Identity},

	// Users and profile.
	{Method: get, Pattern: "/api/v2/user/query", Service: Identity},
	{Method: get, Pattern: "/api/v2/user/{userId}", Service: Identity},
	{Method: patch, Pattern: "/api/v2/user/{userId}", Service: Identity},
	{Method: del, Pattern: "/api/v2/user/{userId}", Service: Identity},
	{Method: get, Pattern: "/api/v2/profile", Service: Identity},
	{Method: patch, Pattern: "/api/v2/profile", Service: Identity},

	// Tokens.
	{Method: post, Pattern: "/api/v2/token", Service: Identity},
	{Method: get, Pattern: "/api/v2/token/query", Service: Identity},
	{Method: del, Pattern: "/api/v2/token/{id}", Service: Identity},

	// Global parameters.
	{Method: get, Pattern: "/api/v2/parameters", Service: Identity},
	{Method: post, Pattern: "/api/v2/parameters", Service: Identity},
	{Method: put, Pattern: "/api/v2/parameters", Service: Identity},
	{Method: del, Pattern: "/api/v2/parameters/{name}", Service: Identity},

	// System.
	{Method: get, Pattern: "/api/v2/settings", Service: Identity},
	{Method: put, Pattern: "/api/v2/settings", Service: Identity},
	{Method: get, Pattern: "/api/v2/features", Service: Identity},
	{Method: get, Pattern: "/api/v2/context", Service: Identity},
	{Method: get, Pattern: "/api/v2/navigation", Service: Identity},
	// A locked installation must be able to unlock itself, so activation needs no credentials.
	{Method: put, Pattern: "/api/v2/activate", Service: Identity, Open: true},

	// Integrations. Chat requests are verified by their signature and the install landing
	// steps by a signed state, both in the integrations service.
	{Method: get, Pattern: "/api/v2/integration", Service: Integrations},
	{Method: get, Pattern: "/api/v2/integration/codehost/installation", Service: Integrations, Open: true},
	{Method: post, Pattern: "/api/v2/integration/codehost/link", Service: Integrations},
	{Method: post, Pattern: "/api/v2/integration/codehost/unlink", Service: Integrations},
	{Method: get, Pattern: "/api/v2/integration/chat/install", Service: Integrations, Open: true},
	{Method: get, Pattern: "/api/v2/integration/chat/auth", Service: Integrations, Open: true},
	{Method: post, Pattern: "/api/v2/integration/chat/commands", Service: Integrations, Open: true},
	{Method: post, Pattern: "/api/v2/integration/chat/events", Service: Integrations, Open: true},
	{Method: post, Pattern: "/api/v2/integration/chat/interactivity", Service: Integrations, Open: true},

	// Events, callbacks and webhooks: senders that cannot set headers put the token in the
	// query. The webhook is open because code-host deliveries carry a signature instead.
	{Method: post, Pattern: "/api/v2/event", Service: Integrations, QueryToken: true},
	{Method: post, Pattern: "/api/v2/webhook", Service: Integrations, QueryToken: true, Open: true},
	{Method: post, Pattern: "/api/v2/callback", Service: Runs, QueryToken: true},
	{Method: get, Pattern: "/api/v2/callback", Service: Runs, QueryToken: true},

	// Compatibility paths of Boomerang Flow v4 clients (API.md §1), answered by the seed's
	// endpoints.
	{Method: get, Pattern: "/api/v2/user/profile", Service: Identity, Deprecated: true, RewritePath: "/api/v2/profile"},
	{Method: patch, Pattern: "/api/v2/user/profile", Service: Identity, Deprecated: true, RewritePath: "/api/v2/profile"},
	{Method: get, Pattern: "/api/v2/global-params", Service: Identity, Deprecated: true, RewritePath: "/api/v2/parameters"},
	{Method: post, Pattern: "/api/v2/global-params", Service: Identity, Deprecated: true, RewritePath: "/api/v2/parameters"},
	// The seed replaces a parameter with PUT /parameters, whose body names it.
	{Method: patch, Pattern: "/api/v2/global-params/{name}", Service: Identity, Deprecated: true, RewritePath: "/api/v2/parameters", RewriteMethod: put},
	{Method: del, Pattern: "/api/v2/global-params/{name}", Service: Identity, Deprecated: true, RewritePath: "/api/v2/parameters/{name}"},
	// The workflows service finds the workflow among the caller's teams.
	{Method: get, Pattern: "/api/v2/workflow/{name}/export", Service: Workflows, Deprecated: true},
	{Method: get, Pattern: "/api/v2/schedule/validate-cron", Service: Schedules, Deprecated: true},
	{Method: get, Pattern: "/api/v2/integration/github/installation", Service: Integrations, Open: true, Deprecated: true, RewritePath: "/api/v2/integration/codehost/installation"},
	{Method: post, Pattern: "/api/v2/integration/github/link", Service: Integrations, Deprecated: true, RewritePath: "/api/v2/integration/codehost/link"},
	{Method: post, Pattern: "/api/v2/integration/github/unlink", Service: Integrations, Deprecated: true, RewritePath: "/api/v2/integration/codehost/unlink"},
	// The identity service reads the group id from the path.
	{Method: del, Pattern: "/api/v2/team/{team}/approvers/{groupId}", Service: Identity, Deprecated: true},
}

// Declared returns a copy of the declared routing table.
func Declared() []Route {
	return append([]Route(nil), declared...)
}

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
// Each route carries the gateway's authorization (see Access): the resource, and the action
// by method — read for GET, write for POST, PUT and PATCH, delete for DELETE — except run
// moves and acting on actions, which are `action`. Global roles reach instance-wide routes
// (no {team}); team roles and team tokens only their team's. Routes whose decision needs
// data the gateway lacks are ServiceDecides; what anyone signed in may read is
// Authenticated.
//
// GET /api/v2/openapi.yaml and GET /api/v2/docs are left out on purpose: the gateway serves
// them itself (internal/openapi), open and never proxied; this table lists what is proxied.
var declared = []Route{
	// Workflows.
	{Method: put, Pattern: "/api/v2/team/{team}/workflow/{name}/compose", Service: Workflows, BodyLimit: large, Resource: "workflow", Action: "write", Workflow: true},
	{Method: get, Pattern: "/api/v2/team/{team}/workflow/{name}/compose", Service: Workflows, Resource: "workflow", Action: "read", Workflow: true},
	{Method: put, Pattern: "/api/v2/team/{team}/workflow", Service: Workflows, BodyLimit: large, Resource: "workflow", Action: "write"},
	{Method: post, Pattern: "/api/v2/team/{team}/workflow", Service: Workflows, BodyLimit: large, Resource: "workflow", Action: "write"},
	{Method: get, Pattern: "/api/v2/team/{team}/workflow/query", Service: Workflows, Resource: "workflow", Action: "read"},
	{Method: get, Pattern: "/api/v2/team/{team}/workflow/{name}", Service: Workflows, Resource: "workflow", Action: "read", Workflow: true},
	{Method: del, Pattern: "/api/v2/team/{team}/workflow/{name}", Service: Workflows, Resource: "workflow", Action: "delete", Workflow: true},
	// A duplicate is a new workflow of the team, not a change to {name}.
	{Method: post, Pattern: "/api/v2/team/{team}/workflow/{name}/duplicate", Service: Workflows, Resource: "workflow", Action: "write"},
	{Method: get, Pattern: "/api/v2/team/{team}/workflow/{name}/export", Service: Workflows, Resource: "workflow", Action: "read", Workflow: true},
	{Method: get, Pattern: "/api/v2/team/{team}/workflow/{name}/available-parameters", Service: Workflows, Resource: "workflow", Action: "read", Workflow: true},
	{Method: get, Pattern: "/api/v2/team/{team}/workflow/{name}/changelog", Service: Workflows, Resource: "workflow", Action: "read", Workflow: true},
	// Submitting creates a run: workflowrun/write in the workflow, which its tokens may hold.
	{Method: post, Pattern: "/api/v2/team/{team}/workflow/{name}/submit", Service: Runs, Resource: "workflowrun", Action: "write", Workflow: true},

	// Workflow runs. A run's workflow is not in the path: a workflow token of the team
	// passes on to the runs service, which checks the run belongs to its workflow.
	{Method: get, Pattern: "/api/v2/team/{team}/workflowrun/count", Service: Runs, Resource: "workflowrun", Action: "read", InWorkflow: true},
	{Method: get, Pattern: "/api/v2/team/{team}/workflowrun/query", Service: Runs, Resource: "workflowrun", Action: "read", InWorkflow: true},
	{Method: get, Pattern: "/api/v2/team/{team}/workflowrun/{workflowRunId}", Service: Runs, Resource: "workflowrun", Action: "read", InWorkflow: true},
	{Method: get, Pattern: "/api/v2/team/{team}/workflowrun/{workflowRunId}/watch", Service: Runs, Resource: "workflowrun", Action: "read", InWorkflow: true,
		Streaming: true, Feed: true, Extension: true},
	{Method: get, Pattern: "/api/v2/team/{team}/workflowrun/watch", Service: Runs, Resource: "workflowrun", Action: "read", InWorkflow: true,
		Streaming: true, Feed: true, Extension: true},
	{Method: del, Pattern: "/api/v2/team/{team}/workflowrun/{workflowRunId}/cancel", Service: Runs, Resource: "workflowrun", Action: "action", InWorkflow: true},
	{Method: put, Pattern: "/api/v2/team/{team}/workflowrun/{workflowRunId}/finalize", Service: Runs, Resource: "workflowrun", Action: "action", InWorkflow: true},
	{Method: put, Pattern: "/api/v2/team/{team}/workflowrun/{workflowRunId}/retry", Service: Runs, Resource: "workflowrun", Action: "action", InWorkflow: true},
	{Method: put, Pattern: "/api/v2/team/{team}/workflowrun/{workflowRunId}/start", Service: Runs, Resource: "workflowrun", Action: "action", InWorkflow: true},

	// Task runs. The path names no team: the runs service checks the run's team.
	{Method: get, Pattern: "/api/v2/taskrun/{taskRunId}/log", Service: Runs, Streaming: true, Access: ServiceDecides},

	// Workers of generic tasks over HTTP: the team's queue {queue}, for a principal that may
	// work it (queue:<name>/action, queue/action or more).
	{Method: post, Pattern: "/api/v2/team/{team}/queue/{queue}/claim", Service: Runs, Resource: "queue", Action: "action", Named: true, Extension: true, LongPoll: true},
	{Method: post, Pattern: "/api/v2/team/{team}/queue/{queue}/attempt/{attemptId}/heartbeat", Service: Runs, Resource: "queue", Action: "action", Named: true, Extension: true},
	{Method: post, Pattern: "/api/v2/team/{team}/queue/{queue}/attempt/{attemptId}/log", Service: Runs, Resource: "queue", Action: "action", Named: true, Extension: true},
	{Method: post, Pattern: "/api/v2/team/{team}/queue/{queue}/attempt/{attemptId}/end", Service: Runs, Resource: "queue", Action: "action", Named: true, Extension: true, LongPoll: true},
	{Method: post, Pattern: "/api/v2/team/{team}/queue/{queue}/attempt/{attemptId}/release", Service: Runs, Resource: "queue", Action: "action", Named: true, Extension: true},

	// Tasks, team-scoped.
	{Method: post, Pattern: "/api/v2/team/{team}/task", Service: Tasks, Resource: "task", Action: "write"},
	{Method: get, Pattern: "/api/v2/team/{team}/task/query", Service: Tasks, Resource: "task", Action: "read"},
	// Validating changes nothing.
	{Method: post, Pattern: "/api/v2/team/{team}/task/validate", Service: Tasks, Resource: "task", Action: "read"},
	{Method: get, Pattern: "/api/v2/team/{team}/task/{name}", Service: Tasks, Resource: "task", Action: "read"},
	{Method: put, Pattern: "/api/v2/team/{team}/task/{name}", Service: Tasks, Resource: "task", Action: "write"},
	{Method: del, Pattern: "/api/v2/team/{team}/task/{name}", Service: Tasks, Resource: "task", Action: "delete"},
	{Method: get, Pattern: "/api/v2/team/{team}/task/{name}/changelog", Service: Tasks, Resource: "task", Action: "read"},

	// Tasks, global (no delete). The catalogue is everyone's to read; a search with
	// `teams=` reads those teams' tasks, which the tasks service checks.
	{Method: post, Pattern: "/api/v2/task", Service: Tasks, Resource: "task", Action: "write"},
	{Method: get, Pattern: "/api/v2/task/query", Service: Tasks, Access: ServiceDecides},
	{Method: post, Pattern: "/api/v2/task/validate", Service: Tasks, Access: Authenticated},
	{Method: get, Pattern: "/api/v2/task/{name}", Service: Tasks, Access: Authenticated},
	{Method: put, Pattern: "/api/v2/task/{name}", Service: Tasks, Resource: "task", Action: "write"},
	{Method: get, Pattern: "/api/v2/task/{name}/changelog", Service: Tasks, Access: Authenticated},

	// Workflow templates: everyone reads them to start workflows from.
	{Method: put, Pattern: "/api/v2/workflowtemplate", Service: Workflows, BodyLimit: large, Resource: "workflowtemplate", Action: "write"},
	{Method: post, Pattern: "/api/v2/workflowtemplate", Service: Workflows, BodyLimit: large, Resource: "workflowtemplate", Action: "write"},
	{Method: get, Pattern: "/api/v2/workflowtemplate/query", Service: Workflows, Access: Authenticated},
	{Method: get, Pattern: "/api/v2/workflowtemplate/{name}", Service: Workflows, Access: Authenticated},
	{Method: del, Pattern: "/api/v2/workflowtemplate/{name}", Service: Workflows, Resource: "workflowtemplate", Action: "delete"},

	// Schedules: a schedule's workflow is in its body or its document, not the path, so a
	// workflow's token passes on and the service judges it in that workflow.
	{Method: post, Pattern: "/api/v2/team/{team}/schedule", Service: Schedules, Resource: "schedule", Action: "write", InWorkflow: true},
	{Method: put, Pattern: "/api/v2/team/{team}/schedule", Service: Schedules, Resource: "schedule", Action: "write", InWorkflow: true},
	{Method: get, Pattern: "/api/v2/team/{team}/schedule/calendars", Service: Schedules, Resource: "schedule", Action: "read", InWorkflow: true},
	{Method: get, Pattern: "/api/v2/team/{team}/schedule/query", Service: Schedules, Resource: "schedule", Action: "read", InWorkflow: true},
	{Method: get, Pattern: "/api/v2/team/{team}/schedule/validate-cron", Service: Schedules, Resource: "schedule", Action: "read", InWorkflow: true},
	{Method: get, Pattern: "/api/v2/team/{team}/schedule/{scheduleId}", Service: Schedules, Resource: "schedule", Action: "read", InWorkflow: true},
	{Method: del, Pattern: "/api/v2/team/{team}/schedule/{scheduleId}", Service: Schedules, Resource: "schedule", Action: "delete", InWorkflow: true},
	// Beyond the seed: every fire of a past window, each one run.
	{Method: post, Pattern: "/api/v2/team/{team}/schedule/{scheduleId}/backfill", Service: Schedules, Resource: "schedule", Action: "write", Extension: true, InWorkflow: true},

	// Actions.
	// Approving or rejecting; who may vote on which action the runs service decides.
	{Method: put, Pattern: "/api/v2/team/{team}/action", Service: Runs, Resource: "action", Action: "action"},
	{Method: get, Pattern: "/api/v2/team/{team}/action/query", Service: Runs, Resource: "action", Action: "read"},
	{Method: get, Pattern: "/api/v2/team/{team}/action/summary", Service: Runs, Resource: "action", Action: "read"},
	{Method: get, Pattern: "/api/v2/team/{team}/action/{actionId}", Service: Runs, Resource: "action", Action: "read"},

	// Insights.
	{Method: get, Pattern: "/api/v2/team/{team}/insights", Service: Runs, Resource: "insights", Action: "read"},

	// Teams. Creating one depends on who asks (users become its owner) and the search is
	// filtered to the caller's teams. Members and approver groups change only by owners
	// (team/delete is an owner's right); quotas only by admins, which identity checks.
	// Leaving needs membership, which team/read stands for here.
	{Method: post, Pattern: "/api/v2/team", Service: Identity, Access: ServiceDecides, ChangesMembership: true},
	{Method: get, Pattern: "/api/v2/team/query", Service: Identity, Access: ServiceDecides},
	{Method: get, Pattern: "/api/v2/team/roles", Service: Identity, Access: Authenticated},
	{Method: get, Pattern: "/api/v2/team/quotas/default", Service: Identity, Access: Authenticated},
	{Method: post, Pattern: "/api/v2/team/validate-name", Service: Identity, Access: Authenticated},
	{Method: get, Pattern: "/api/v2/team/{team}", Service: Identity, Resource: "team", Action: "read"},
	{Method: patch, Pattern: "/api/v2/team/{team}", Service: Identity, Resource: "team", Action: "write", ChangesMembership: true},
	{Method: del, Pattern: "/api/v2/team/{team}", Service: Identity, Resource: "team", Action: "delete", ChangesMembership: true},
	{Method: del, Pattern: "/api/v2/team/{team}/approvers", Service: Identity, Resource: "team", Action: "delete"},
	{Method: del, Pattern: "/api/v2/team/{team}/parameters/{name}", Service: Identity, Resource: "parameter", Action: "delete"},
	{Method: del, Pattern: "/api/v2/team/{team}/leave", Service: Identity, Resource: "team", Action: "read", ChangesMembership: true},
	{Method: del, Pattern: "/api/v2/team/{team}/members", Service: Identity, Resource: "team", Action: "delete", ChangesMembership: true},
	{Method: del, Pattern: "/api/v2/team/{team}/quotas", Service: Identity, Resource: "team", Action: "write"},

	// Users and profile: oneself or an admin, which only identity can tell.
	{Method: get, Pattern: "/api/v2/user/query", Service: Identity, Access: ServiceDecides},
	{Method: get, Pattern: "/api/v2/user/{userId}", Service: Identity, Access: ServiceDecides},
	{Method: patch, Pattern: "/api/v2/user/{userId}", Service: Identity, Access: ServiceDecides},
	{Method: del, Pattern: "/api/v2/user/{userId}", Service: Identity, Resource: "user", Action: "delete"},
	{Method: get, Pattern: "/api/v2/profile", Service: Identity, Access: ServiceDecides, SignUp: true},
	{Method: patch, Pattern: "/api/v2/profile", Service: Identity, Access: ServiceDecides},

	// Tokens: who may mint what, and see which, depends on the token asked for.
	{Method: post, Pattern: "/api/v2/token", Service: Identity, Access: ServiceDecides},
	{Method: get, Pattern: "/api/v2/token/query", Service: Identity, Access: ServiceDecides},
	{Method: del, Pattern: "/api/v2/token/{id}", Service: Identity, Access: ServiceDecides},

	// Global parameters: everyone reads them (secrets masked), admins write.
	{Method: get, Pattern: "/api/v2/parameters", Service: Identity, Access: Authenticated},
	{Method: post, Pattern: "/api/v2/parameters", Service: Identity, Resource: "parameter", Action: "write"},
	{Method: put, Pattern: "/api/v2/parameters", Service: Identity, Resource: "parameter", Action: "write"},
	{Method: del, Pattern: "/api/v2/parameters/{name}", Service: Identity, Resource: "parameter", Action: "delete"},

	// System: settings are instance-wide (admins); what the UI needs is everyone's.
	{Method: get, Pattern: "/api/v2/settings", Service: Identity, Resource: "system", Action: "read"},
	{Method: put, Pattern: "/api/v2/settings", Service: Identity, Resource: "system", Action: "write"},
	{Method: get, Pattern: "/api/v2/features", Service: Identity, Access: Authenticated},
	{Method: get, Pattern: "/api/v2/context", Service: Identity, Access: Authenticated},
	{Method: get, Pattern: "/api/v2/navigation", Service: Identity, Access: Authenticated},
	// A locked installation must be able to unlock itself, so activation needs no credentials.
	{Method: put, Pattern: "/api/v2/activate", Service: Identity, Open: true},

	// Integrations. Chat requests are verified by their signature and the install landing
	// steps by a signed state, both in the integrations service. The team of the others is
	// in the query or the body.
	{Method: get, Pattern: "/api/v2/integration", Service: Integrations, Access: ServiceDecides},
	{Method: get, Pattern: "/api/v2/integration/codehost/installation", Service: Integrations, Open: true},
	{Method: post, Pattern: "/api/v2/integration/codehost/link", Service: Integrations, Access: ServiceDecides},
	{Method: post, Pattern: "/api/v2/integration/codehost/unlink", Service: Integrations, Access: ServiceDecides},
	{Method: get, Pattern: "/api/v2/integration/chat/install", Service: Integrations, Open: true},
	{Method: get, Pattern: "/api/v2/integration/chat/auth", Service: Integrations, Open: true},
	{Method: post, Pattern: "/api/v2/integration/chat/commands", Service: Integrations, Open: true},
	{Method: post, Pattern: "/api/v2/integration/chat/events", Service: Integrations, Open: true},
	{Method: post, Pattern: "/api/v2/integration/chat/interactivity", Service: Integrations, Open: true},

	// Events, callbacks and webhooks: senders that cannot set headers put the token in the
	// query. The webhook is open because code-host deliveries carry a signature instead. The
	// workflow or run is in the query or the event, and a callback accepts a run's token.
	{Method: post, Pattern: "/api/v2/event", Service: Integrations, QueryToken: true, Access: ServiceDecides},
	{Method: post, Pattern: "/api/v2/webhook", Service: Integrations, QueryToken: true, Open: true},
	{Method: post, Pattern: "/api/v2/callback", Service: Runs, QueryToken: true, Access: ServiceDecides, RunCallback: true},
	{Method: get, Pattern: "/api/v2/callback", Service: Runs, QueryToken: true, Access: ServiceDecides, RunCallback: true},

	// Compatibility paths of Boomerang Flow v4 clients (API.md §1), answered by the seed's
	// endpoints.
	{Method: get, Pattern: "/api/v2/user/profile", Service: Identity, Deprecated: true, RewritePath: "/api/v2/profile", Access: ServiceDecides, SignUp: true},
	{Method: patch, Pattern: "/api/v2/user/profile", Service: Identity, Deprecated: true, RewritePath: "/api/v2/profile", Access: ServiceDecides},
	{Method: get, Pattern: "/api/v2/global-params", Service: Identity, Deprecated: true, RewritePath: "/api/v2/parameters", Access: Authenticated},
	{Method: post, Pattern: "/api/v2/global-params", Service: Identity, Deprecated: true, RewritePath: "/api/v2/parameters", Resource: "parameter", Action: "write"},
	// The seed replaces a parameter with PUT /parameters, whose body names it.
	{Method: patch, Pattern: "/api/v2/global-params/{name}", Service: Identity, Deprecated: true, RewritePath: "/api/v2/parameters", RewriteMethod: put, Resource: "parameter", Action: "write"},
	{Method: del, Pattern: "/api/v2/global-params/{name}", Service: Identity, Deprecated: true, RewritePath: "/api/v2/parameters/{name}", Resource: "parameter", Action: "delete"},
	// The workflows service finds the workflow among the caller's teams.
	{Method: get, Pattern: "/api/v2/workflow/{name}/export", Service: Workflows, Deprecated: true, Access: ServiceDecides},
	{Method: get, Pattern: "/api/v2/schedule/validate-cron", Service: Schedules, Deprecated: true, Access: Authenticated},
	{Method: get, Pattern: "/api/v2/integration/github/installation", Service: Integrations, Open: true, Deprecated: true, RewritePath: "/api/v2/integration/codehost/installation"},
	{Method: post, Pattern: "/api/v2/integration/github/link", Service: Integrations, Deprecated: true, RewritePath: "/api/v2/integration/codehost/link", Access: ServiceDecides},
	{Method: post, Pattern: "/api/v2/integration/github/unlink", Service: Integrations, Deprecated: true, RewritePath: "/api/v2/integration/codehost/unlink", Access: ServiceDecides},
	// The identity service reads the group id from the path.
	{Method: del, Pattern: "/api/v2/team/{team}/approvers/{groupId}", Service: Identity, Deprecated: true, Resource: "team", Action: "delete"},
}

// Declared returns a copy of the declared routing table.
func Declared() []Route {
	return append([]Route(nil), declared...)
}

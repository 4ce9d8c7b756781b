package routes

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/workflowid"
)

// decision is a route's authorization as the gateway applies it.
type decision struct {
	access     Access
	resource   string
	action     string
	workflow   bool
	inWorkflow bool
}

// TestEveryRouteHasAnAuthorizationDecision keeps the table complete: every route is open,
// or checked at the gateway with a known resource and action, or explicitly left to the
// service. It also pins the decisions the contract names.
func TestEveryRouteHasAnAuthorizationDecision(t *testing.T) {
	t.Parallel()
	routes := Default().Routes()
	for _, r := range routes {
		t.Run(r.Method+" "+r.Pattern, func(t *testing.T) {
			t.Parallel()
			if r.Open {
				assert.Equal(t, Check, r.Access, "open routes carry no rule")
				assert.Empty(t, r.Resource+r.Action)
				return
			}
			switch r.Access {
			case Check:
				assert.Contains(t, auth.Resources, r.Resource)
				assert.Contains(t, auth.Actions, r.Action)
				// The action follows the method unless the route moves something along.
				want := map[string]string{"GET": "read", "POST": "write", "PUT": "write", "PATCH": "write", "DELETE": "delete"}[r.Method]
				if r.Action != want {
					assert.Contains(t, allowedActionExceptions, r.Method+" "+r.Pattern, "action %s for %s", r.Action, r.Method)
				}
				if strings.Contains(r.Pattern, "{team}") {
					assert.GreaterOrEqual(t, r.team, 0)
				}
			case Authenticated, ServiceDecides:
				assert.Empty(t, r.Resource+r.Action)
			default:
				t.Fatalf("no decision: %v", r.Access)
			}
		})
	}

	pinned := map[string]decision{
		"POST /api/v2/team/{team}/workflow/{name}/submit":               {Check, "workflowrun", "write", true, false},
		"PUT /api/v2/team/{team}/action":                                {Check, "action", "action", false, false},
		"PUT /api/v2/team/{team}/workflowrun/{workflowRunId}/start":     {Check, "workflowrun", "action", false, true},
		"DELETE /api/v2/team/{team}/workflowrun/{workflowRunId}/cancel": {Check, "workflowrun", "action", false, true},
		"GET /api/v2/team/{team}/workflow/{name}":                       {Check, "workflow", "read", true, false},
		"GET /api/v2/team/{team}/workflow/query":                        {Check, "workflow", "read", false, false},
		"DELETE /api/v2/team/{team}":                                    {Check, "team", "delete", false, false},
		"PUT /api/v2/settings":                                          {Check, "system", "write", false, false},
		"POST /api/v2/workflowtemplate":                                 {Check, "workflowtemplate", "write", false, false},
		"GET /api/v2/profile":                                           {ServiceDecides, "", "", false, false},
		"GET /api/v2/user/{userId}":                                     {ServiceDecides, "", "", false, false},
		"GET /api/v2/team/query":                                        {ServiceDecides, "", "", false, false},
		"POST /api/v2/team":                                             {ServiceDecides, "", "", false, false},
		"POST /api/v2/token":                                            {ServiceDecides, "", "", false, false},
		"GET /api/v2/token/query":                                       {ServiceDecides, "", "", false, false},
		"DELETE /api/v2/token/{id}":                                     {ServiceDecides, "", "", false, false},
		"POST /api/v2/callback":                                         {ServiceDecides, "", "", false, false},
		"GET /api/v2/features":                                          {Authenticated, "", "", false, false},
	}
	byKey := map[string]Route{}
	for _, r := range routes {
		byKey[r.Method+" "+r.Pattern] = r
	}
	for key, want := range pinned {
		r, ok := byKey[key]
		require.True(t, ok, key)
		assert.Equal(t, want, decision{r.Access, r.Resource, r.Action, r.Workflow, r.InWorkflow}, key)
	}
}

// allowedActionExceptions are the checked routes whose action is not the method's: run
// moves and votes are `action`, and a few writes are checked as what they really need.
var allowedActionExceptions = []string{
	"DELETE /api/v2/team/{team}/workflowrun/{workflowRunId}/cancel",
	"PUT /api/v2/team/{team}/workflowrun/{workflowRunId}/finalize",
	"PUT /api/v2/team/{team}/workflowrun/{workflowRunId}/retry",
	"PUT /api/v2/team/{team}/workflowrun/{workflowRunId}/start",
	"PUT /api/v2/team/{team}/action",
	// Validating a task changes nothing.
	"POST /api/v2/team/{team}/task/validate",
	// Leaving needs membership only; resetting quotas is an admin's, which identity checks.
	"DELETE /api/v2/team/{team}/leave",
	"DELETE /api/v2/team/{team}/quotas",
	// A worker works its queue: claims, beats, logs and ends attempts.
	"POST /api/v2/team/{team}/queue/{queue}/claim",
	"POST /api/v2/team/{team}/queue/{queue}/attempt/{attemptId}/heartbeat",
	"POST /api/v2/team/{team}/queue/{queue}/attempt/{attemptId}/log",
	"POST /api/v2/team/{team}/queue/{queue}/attempt/{attemptId}/end",
	"POST /api/v2/team/{team}/queue/{queue}/attempt/{attemptId}/release",
}

func TestAuthorize(t *testing.T) {
	t.Parallel()
	table := Default()
	user := func(team, role string) auth.Principal {
		return auth.Principal{Type: auth.TypeUser, ID: "u1", Teams: map[string]string{team: role}}
	}
	teamToken := func(team string, perms ...string) auth.Principal {
		return auth.Principal{Type: auth.TypeTeam, ID: team, Team: team, TokenID: "t1", Permissions: perms}
	}
	workflowToken := func(ref string, perms ...string) auth.Principal {
		team, wf, _ := strings.Cut(ref, "/")
		return auth.Principal{Type: auth.TypeWorkflow, ID: ref, Team: team, Workflow: wf, TokenID: "t2", Permissions: perms}
	}
	admin := auth.Principal{Type: auth.TypeUser, ID: "a", Roles: []string{auth.RoleAdmin}}
	operator := auth.Principal{Type: auth.TypeUser, ID: "o", Roles: []string{auth.RoleOperator}}
	tests := []struct {
		name         string
		method, path string
		p            auth.Principal
		wantAllowed  bool
	}{
		{"reader reads a workflow", "GET", "/api/v2/team/infra/workflow/build", user("infra", "reader"), true},
		{"reader cannot save one", "PUT", "/api/v2/team/infra/workflow", user("infra", "reader"), false},
		{"editor saves one", "PUT", "/api/v2/team/infra/workflow", user("infra", "editor"), true},
		{"editor cannot delete one", "DELETE", "/api/v2/team/infra/workflow/build", user("infra", "editor"), false},
		{"owner deletes one", "DELETE", "/api/v2/team/infra/workflow/build", user("infra", "owner"), true},
		{"owner of another team", "GET", "/api/v2/team/infra/workflow/build", user("ops", "owner"), false},
		{"editor starts a run", "PUT", "/api/v2/team/infra/workflowrun/r1/start", user("infra", "editor"), true},
		{"reader cannot cancel a run", "DELETE", "/api/v2/team/infra/workflowrun/r1/cancel", user("infra", "reader"), false},
		{"editor votes", "PUT", "/api/v2/team/infra/action", user("infra", "editor"), true},
		{"reader cannot vote", "PUT", "/api/v2/team/infra/action", user("infra", "reader"), false},
		{"team token in its team", "GET", "/api/v2/team/infra/schedule/query", teamToken("infra", "schedule/read"), true},
		{"team token of another team", "GET", "/api/v2/team/infra/schedule/query", teamToken("ops", "**/**"), false},
		{"team token beyond its permissions", "POST", "/api/v2/team/infra/schedule", teamToken("infra", "**/read"), false},
		{"team token instance-wide", "PUT", "/api/v2/workflowtemplate", teamToken("infra", "**/**"), false},
		{"workflow token submits its workflow", "POST", "/api/v2/team/infra/workflow/build/submit", workflowToken("infra/build", "workflowrun/write"), true},
		{"workflow token submits its workflow by id", "POST", "/api/v2/team/infra/workflow/" + workflowid.Of("infra", "build") + "/submit", workflowToken("infra/build", "workflowrun/write"), true},
		{"workflow token submits another by id", "POST", "/api/v2/team/infra/workflow/" + workflowid.Of("infra", "deploy") + "/submit", workflowToken("infra/build", "workflowrun/write"), false},
		{"workflow token, its workflow's name in another team's id", "POST", "/api/v2/team/infra/workflow/" + workflowid.Of("ops", "build") + "/submit", workflowToken("infra/build", "workflowrun/write"), false},
		{"workflow token submits another", "POST", "/api/v2/team/infra/workflow/deploy/submit", workflowToken("infra/build", "workflowrun/write"), false},
		{"workflow token reads a run, the service checks whose", "GET", "/api/v2/team/infra/workflowrun/r1", workflowToken("infra/build", "workflowrun/read"), true},
		{"workflow token without the permission", "GET", "/api/v2/team/infra/workflowrun/r1", workflowToken("infra/build", "workflow/read"), false},
		{"workflow token of another team's run", "GET", "/api/v2/team/ops/workflowrun/r1", workflowToken("infra/build", "workflowrun/read"), false},
		{"workflow token team-wide", "GET", "/api/v2/team/infra/workflow/query", workflowToken("infra/build", "**/**"), false},
		{"encoded team name", "GET", "/api/v2/team/%69nfra/workflow/build", user("infra", "owner"), false},
		{"admin anywhere", "DELETE", "/api/v2/team/infra", admin, true},
		{"admin settings", "PUT", "/api/v2/settings", admin, true},
		{"operator reads settings", "GET", "/api/v2/settings", operator, true},
		{"operator cannot delete a team", "DELETE", "/api/v2/team/infra", operator, false},
		{"member cannot change settings", "PUT", "/api/v2/settings", user("infra", "owner"), false},
		{"global token within its permissions", "GET", "/api/v2/team/infra/insights", auth.Principal{Type: auth.TypeGlobal, ID: "g", Permissions: []string{"insights/read"}}, true},
		{"anyone signed in reads features", "GET", "/api/v2/features", user("infra", "reader"), true},
		{"the profile is the service's to decide", "PATCH", "/api/v2/profile", teamToken("infra", "**/read"), true},
		{"open routes need nothing", "PUT", "/api/v2/activate", auth.Anonymous, true},
		{"anonymous on a checked route", "GET", "/api/v2/team/infra", auth.Anonymous, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, params, err := table.Match(tt.method, tt.path)
			require.NoError(t, err)
			err = r.Authorize(&tt.p, &params)
			if tt.wantAllowed {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apperr.HasReason(err, apperr.PermissionDenied), "%v", err)
		})
	}
}

// A run's callback token answers its run's callbacks and nothing else: every other route
// refuses it at the gateway, also those that leave the decision to their service or need no
// credentials.
func TestRunTokensOnlyAnswerCallbacks(t *testing.T) {
	t.Parallel()
	run := auth.RunPrincipal("run-1")
	var callbacks []string
	for _, r := range Default().Routes() {
		if r.RunCallback {
			callbacks = append(callbacks, r.Method+" "+r.Pattern)
		}
		t.Run(r.Method+" "+r.Pattern, func(t *testing.T) {
			t.Parallel()
			var params Params
			params.names = r.params
			params.n = len(r.params)
			for i := range params.n {
				params.values[i] = "infra"
			}
			err := r.Authorize(&run, &params)
			if r.RunCallback {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apperr.HasReason(err, apperr.PermissionDenied), "%v", err)
		})
	}
	assert.ElementsMatch(t, []string{"POST /api/v2/callback", "GET /api/v2/callback"}, callbacks)
}

func TestAuthorizeDoesNotAllocate(t *testing.T) {
	table := Default()
	r, params, err := table.Match("POST", "/api/v2/team/infra/workflow/build/submit")
	require.NoError(t, err)
	p := auth.Principal{Type: auth.TypeUser, ID: "u", Teams: map[string]string{"infra": "editor"}}
	allocs := testing.AllocsPerRun(100, func() {
		if err := r.Authorize(&p, &params); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}

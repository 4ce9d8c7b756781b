package auth_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

func TestValidPermission(t *testing.T) {
	t.Parallel()
	for give, want := range map[string]bool{
		"workflow/read": true, "**/read": true, "workflow/**": true, "**/**": true,
		"workflow": false, "workflow/fly": false, "spaceship/read": false, "/read": false, "": false,
	} {
		assert.Equal(t, want, auth.ValidPermission(give), give)
	}
}

func TestCan(t *testing.T) {
	t.Parallel()
	infra := auth.TeamScope("infra")
	other := auth.TeamScope("other")
	build := auth.Scope{Team: "infra", Workflow: "build"}
	deploy := auth.Scope{Team: "infra", Workflow: "deploy"}
	user := func(team, role string) auth.Principal {
		return auth.Principal{Type: auth.TypeUser, ID: "u", Teams: map[string]string{team: role}}
	}
	tests := []struct {
		name     string
		p        auth.Principal
		scope    auth.Scope
		resource string
		action   string
		want     bool
	}{
		{"admin anywhere", auth.Principal{Type: auth.TypeUser, Roles: []string{"admin"}}, other, "team", "delete", true},
		{"admin instance-wide", auth.Principal{Type: auth.TypeUser, Roles: []string{"admin"}}, auth.Scope{}, "system", "write", true},
		{"operator writes", auth.Principal{Type: auth.TypeUser, Roles: []string{"operator"}}, other, "workflow", "write", true},
		{"operator cannot delete", auth.Principal{Type: auth.TypeUser, Roles: []string{"operator"}}, other, "workflow", "delete", false},
		{"owner deletes in team", user("infra", "owner"), infra, "workflow", "delete", true},
		{"owner not elsewhere", user("infra", "owner"), other, "workflow", "read", false},
		{"editor writes", user("infra", "editor"), infra, "workflow", "write", true},
		{"editor acts", user("infra", "editor"), infra, "action", "action", true},
		{"editor cannot delete", user("infra", "editor"), infra, "workflow", "delete", false},
		{"reader reads", user("infra", "reader"), infra, "workflowrun", "read", true},
		{"reader cannot write", user("infra", "reader"), infra, "workflow", "write", false},
		{"member has nothing instance-wide", user("infra", "owner"), auth.Scope{}, "system", "read", false},
		{"global token", auth.Principal{Type: auth.TypeGlobal, Permissions: []string{"workflow/read"}}, other, "workflow", "read", true},
		{"global token narrowed", auth.Principal{Type: auth.TypeGlobal, Permissions: []string{"workflow/read"}}, other, "workflow", "write", false},
		{"team token in team", auth.Principal{Type: auth.TypeTeam, Team: "infra", Permissions: []string{"**/read"}}, infra, "schedule", "read", true},
		{"team token elsewhere", auth.Principal{Type: auth.TypeTeam, Team: "infra", Permissions: []string{"**/**"}}, other, "schedule", "read", false},
		{"workflow token in its workflow", auth.Principal{Type: auth.TypeWorkflow, Team: "infra", Workflow: "build", Permissions: []string{"workflowrun/write"}}, build, "workflowrun", "write", true},
		{"workflow token in another workflow", auth.Principal{Type: auth.TypeWorkflow, Team: "infra", Workflow: "build", Permissions: []string{"**/**"}}, deploy, "workflowrun", "write", false},
		{"workflow token team-wide", auth.Principal{Type: auth.TypeWorkflow, Team: "infra", Workflow: "build", Permissions: []string{"**/**"}}, infra, "workflow", "read", false},
		{"user token narrowed", auth.Principal{Type: auth.TypeUser, TokenID: "t", Teams: map[string]string{"infra": "owner"}, Permissions: []string{"**/read"}}, infra, "workflow", "write", false},
		{"user token within", auth.Principal{Type: auth.TypeUser, TokenID: "t", Teams: map[string]string{"infra": "owner"}, Permissions: []string{"**/read"}}, infra, "workflow", "read", true},
		{"anonymous", auth.Anonymous, infra, "workflow", "read", false},
		{"service", auth.Principal{Type: auth.TypeService, ID: "schedules"}, infra, "workflowrun", "write", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.p.Can(tt.scope, tt.resource, tt.action))
		})
	}
}

func TestRequire(t *testing.T) {
	t.Parallel()
	_, err := auth.Require(context.Background(), auth.TeamScope("infra"), "workflow", "read")
	assert.Equal(t, apperr.KindUnauthenticated, apperr.KindOf(err))

	ctx := auth.WithPrincipal(context.Background(), auth.Principal{Type: auth.TypeUser, ID: "u", Teams: map[string]string{"infra": "reader"}})
	p, err := auth.Require(ctx, auth.TeamScope("infra"), "workflow", "read")
	require.NoError(t, err)
	assert.Equal(t, "u", p.ID)
	_, err = auth.Require(ctx, auth.TeamScope("infra"), "workflow", "write")
	assert.True(t, apperr.HasReason(err, apperr.PermissionDenied))
	assert.Contains(t, err.Error(), "team 'infra'")
}

// A run's token may do nothing but answer its run's callbacks, which is no resource and
// action: Can refuses it everything, even with rights it should never carry.
func TestRunPrincipalCanDoNothing(t *testing.T) {
	t.Parallel()
	run := auth.RunPrincipal("run-1")
	assert.Equal(t, auth.Principal{Type: auth.TypeRun, ID: "run-1", Name: "callback token"}, run)
	claiming := run
	claiming.Roles = []string{auth.RoleAdmin}
	claiming.Permissions = []string{"**/**"}
	claiming.Teams = map[string]string{"infra": auth.RoleOwner}
	claiming.Team, claiming.Workflow = "infra", "build"

	for _, p := range []auth.Principal{run, claiming} {
		assert.False(t, p.IsAdmin())
		assert.False(t, p.SeesAllTeams())
		for _, scope := range []auth.Scope{{}, auth.TeamScope("infra"), {Team: "infra", Workflow: "build"}} {
			for _, res := range auth.Resources {
				for _, act := range auth.Actions {
					assert.False(t, p.Can(scope, res, act), "%+v may %s/%s in %+v", p, res, act, scope)
				}
			}
		}
		_, err := auth.Require(auth.WithPrincipal(context.Background(), p), auth.TeamScope("infra"), "workflowrun", "read")
		assert.True(t, apperr.HasReason(err, apperr.PermissionDenied), "%v", err)
		_, err = auth.RequireService(auth.WithPrincipal(context.Background(), p))
		assert.True(t, apperr.HasReason(err, apperr.PermissionDenied), "%v", err)
	}
}

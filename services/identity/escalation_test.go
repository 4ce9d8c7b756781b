package identity_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
)

// TestOnlyOwnersAndAdminsChangeWhoHoldsWhat tries every operation that changes a team's
// members, roles, approver groups, quotas or status, or a user's type, status or existence,
// as every kind of principal, each in a world of its own. People who own the team (signed
// in, in a session, or through their user token) change members, roles and approver groups;
// admins change everything; no team, workflow or global token changes any of it, whatever
// its permissions.
func TestOnlyOwnersAndAdminsChangeWhoHoldsWhat(t *testing.T) {
	t.Parallel()
	// The operations, in the order each world receives them; allowed answers ok, anything
	// else refused answers 403 (leave: 400 for principals that are not people).
	type op struct {
		name, method, path, body string
		ok                       int
	}
	ops := func(w *escalationWorld, who string) []op {
		return []op{
			{"add an outsider as owner", http.MethodPatch, "/api/v2/team/infra", `{"members":[{"id":"` + w.outsider.ID + `","role":"owner"}]}`, 200},
			{"invite a new owner by email", http.MethodPatch, "/api/v2/team/infra", `{"members":[{"email":"new-` + who + `@example.com","role":"owner"}]}`, 200},
			{"promote the editor to owner", http.MethodPatch, "/api/v2/team/infra", `{"members":[{"id":"` + w.editor.ID + `","role":"owner"}]}`, 200},
			{"add an approver group", http.MethodPatch, "/api/v2/team/infra", `{"approverGroups":[{"name":"leads","approvers":["` + w.owner.ID + `"]}]}`, 200},
			{"change an approver group", http.MethodPatch, "/api/v2/team/infra", `{"approverGroups":[{"name":"release","approvers":["` + w.reader.ID + `"]}]}`, 200},
			{"delete an approver group", http.MethodDelete, "/api/v2/team/infra/approvers", `["` + w.releaseGroup + `"]`, 204},
			{"remove a member", http.MethodDelete, "/api/v2/team/infra/members", `[{"id":"` + w.reader.ID + `"}]`, 204},
			{"change the team's quotas", http.MethodPatch, "/api/v2/team/infra", `{"quotas":{"maxWorkflowCount":7}}`, 200},
			{"reset the team's quotas", http.MethodDelete, "/api/v2/team/infra/quotas", "", 204},
			{"change a user's type", http.MethodPatch, "/api/v2/user/" + w.reader.ID, `{"type":"admin"}`, 204},
			{"change a user's status", http.MethodPatch, "/api/v2/user/" + w.reader.ID, `{"status":"inactive"}`, 204},
			{"delete a member's user", http.MethodDelete, "/api/v2/user/" + w.leaver.ID, "", 204},
			{"create a team naming its owner", http.MethodPost, "/api/v2/team", `{"name":"other-` + who + `","members":[{"id":"` + w.outsider.ID + `","role":"owner"}]}`, 201},
			{"change the team's status", http.MethodPatch, "/api/v2/team/infra", `{"status":"inactive"}`, 200},
			{"remove the human owner", http.MethodDelete, "/api/v2/team/infra/members", `[{"id":"` + w.owner.ID + `"}]`, 204},
		}
	}
	// Which operations each principal may do, by name; the rest must be refused.
	owners := []string{"add an outsider as owner", "invite a new owner by email", "promote the editor to owner",
		"add an approver group", "change an approver group", "delete an approver group", "remove a member",
		"create a team naming its owner", "remove the human owner"}
	people := []string{"create a team naming its owner"}
	all := []string{"*"}
	tests := []struct {
		name    string
		as      func(w *escalationWorld) auth.Principal
		allowed []string
	}{
		{"owner", func(w *escalationWorld) auth.Principal { return w.owner }, owners},
		{"owner in a session", func(w *escalationWorld) auth.Principal {
			return auth.Principal{Type: auth.TypeSession, ID: w.owner.ID, Email: w.owner.Email}
		}, owners},
		{"owner's user token", func(w *escalationWorld) auth.Principal {
			return auth.Principal{Type: auth.TypeUser, ID: w.owner.ID, TokenID: "t-owner"}
		}, owners},
		{"owner's user token narrowed to team/write", func(w *escalationWorld) auth.Principal {
			return auth.Principal{Type: auth.TypeUser, ID: w.owner.ID, TokenID: "t-owner-w", Permissions: []string{"team/write", "team/read"}}
		}, nil},
		{"editor", func(w *escalationWorld) auth.Principal { return w.editor }, people},
		{"operator", func(w *escalationWorld) auth.Principal { return w.operator }, people},
		{"team token with everything", func(*escalationWorld) auth.Principal {
			return auth.Principal{Type: auth.TypeTeam, ID: "infra", Team: "infra", TokenID: "t-team", Permissions: []string{"**/**"}}
		}, nil},
		{"workflow token with everything", func(*escalationWorld) auth.Principal {
			return auth.Principal{Type: auth.TypeWorkflow, ID: "infra/build", Team: "infra", Workflow: "build", TokenID: "t-wf", Permissions: []string{"**/**"}}
		}, nil},
		{"global token with everything", func(*escalationWorld) auth.Principal {
			return auth.Principal{Type: auth.TypeGlobal, ID: "t-global", TokenID: "t-global", Permissions: []string{"**/**"}}
		}, nil},
		{"admin", func(w *escalationWorld) auth.Principal { return w.admin }, all},
		{"bootstrap admin", func(*escalationWorld) auth.Principal { return admin }, all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newEscalationWorld(t)
			as := tt.as(w)
			who := strings.NewReplacer(" ", "-", "'", "").Replace(tt.name)
			for _, o := range ops(w, who) {
				code, out := sendAs(t, w.f, as, o.method, o.path, o.body)
				want := http.StatusForbidden
				if tt.allowed != nil && (tt.allowed[0] == "*" || slices.Contains(tt.allowed, o.name)) {
					want = o.ok
				}
				if !assert.Equal(t, want, code, "%s: %v", o.name, out) || want != http.StatusForbidden {
					continue
				}
				assert.Equal(t, "PERMISSION_DENIED", out["reason"], o.name)
			}
			if tt.allowed == nil {
				assert.Equal(t, w.roles, memberRoles(t, w.team(t)), "nothing changed who holds what")
			}
		})
	}
}

// TestOnlyPeopleLeaveTeams: leaving is a person's act; a token cannot take anyone out.
func TestOnlyPeopleLeaveTeams(t *testing.T) {
	t.Parallel()
	w := newEscalationWorld(t)
	for _, p := range []auth.Principal{
		{Type: auth.TypeTeam, ID: "infra", Team: "infra", TokenID: "t-team", Permissions: []string{"**/**"}},
		{Type: auth.TypeWorkflow, ID: "infra/build", Team: "infra", Workflow: "build", TokenID: "t-wf", Permissions: []string{"**/**"}},
		{Type: auth.TypeGlobal, ID: "t-global", TokenID: "t-global", Permissions: []string{"**/**"}},
	} {
		code, out := sendAs(t, w.f, p, http.MethodDelete, "/api/v2/team/infra/leave", "")
		assert.Equal(t, http.StatusBadRequest, code, "%s: %v", p.Type, out)
	}
	code, out := sendAs(t, w.f, w.editor, http.MethodDelete, "/api/v2/team/infra/leave", "")
	assert.Equal(t, http.StatusNoContent, code, out)
	roles := memberRoles(t, w.team(t))
	assert.NotContains(t, roles, "editor@example.com")
	assert.Equal(t, "owner", roles["owner@example.com"])
}

// escalationWorld is team "infra" owned by one person, with an editor, a reader, a member
// about to be deleted and an approver group; an outsider, an operator and an admin around.
type escalationWorld struct {
	*teamWorld
	admin, leaver auth.Principal
	releaseGroup  string
	// roles are the members' roles at the start, by email.
	roles map[string]string
}

func newEscalationWorld(t *testing.T) *escalationWorld {
	t.Helper()
	w := &escalationWorld{teamWorld: newTeamWorld(t)}
	w.admin = signInUser(t, w.f, "admin@example.com")
	code, out := sendAs(t, w.f, admin, http.MethodPatch, "/api/v2/user/"+w.admin.ID, `{"type":"admin"}`)
	require.Equal(t, http.StatusNoContent, code, out)
	w.admin.Roles = []string{auth.RoleAdmin}
	w.leaver = signInUser(t, w.f, "leaver@example.com")
	code, out = sendAs(t, w.f, w.owner, http.MethodPatch, "/api/v2/team/infra", fmt.Sprintf(
		`{"members":[{"id":%q,"role":"reader"}],"approverGroups":[{"name":"release","approvers":[%q]}]}`, w.leaver.ID, w.editor.ID))
	require.Equal(t, http.StatusOK, code, out)
	for _, g := range out["approverGroups"].([]any) {
		if g.(map[string]any)["name"] == "release" {
			w.releaseGroup = g.(map[string]any)["id"].(string)
		}
	}
	require.NotEmpty(t, w.releaseGroup)
	w.roles = memberRoles(t, out)
	return w
}

package identity_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
)

// teamWorld is a service with team "infra" and people of every kind around it.
type teamWorld struct {
	f                                         *fixture
	owner, editor, reader, outsider, operator auth.Principal
	// token is a team token of infra that may only read.
	token auth.Principal
}

func newTeamWorld(t *testing.T) *teamWorld {
	t.Helper()
	f := newFixture(t)
	w := &teamWorld{
		f:        f,
		owner:    signInUser(t, f, "owner@example.com"),
		editor:   signInUser(t, f, "editor@example.com"),
		reader:   signInUser(t, f, "reader@example.com"),
		outsider: signInUser(t, f, "outsider@example.com"),
		operator: signInUser(t, f, "operator@example.com"),
		token:    auth.Principal{Type: auth.TypeTeam, ID: "tok1", Team: "infra", Permissions: []string{"**/read"}, TokenID: "tok1"},
	}
	code, out := sendAs(t, f, admin, http.MethodPatch, "/api/v2/user/"+w.operator.ID, `{"type":"operator"}`)
	require.Equal(t, http.StatusNoContent, code, out)
	w.operator.Roles = []string{"operator"}
	code, out = sendAs(t, f, w.owner, http.MethodPost, "/api/v2/team", `{"name":"infra","members":[
		{"id":"`+w.editor.ID+`","role":"editor"},{"email":"Reader@Example.com","role":"reader"}]}`)
	require.Equal(t, http.StatusCreated, code, out)
	return w
}

func (w *teamWorld) team(t *testing.T) map[string]any {
	t.Helper()
	code, out := sendAs(t, w.f, admin, http.MethodGet, "/api/v2/team/infra", "")
	require.Equal(t, http.StatusOK, code, out)
	return out
}

// memberRoles maps member emails to roles.
func memberRoles(t *testing.T, team map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range team["members"].([]any) {
		mm := m.(map[string]any)
		out[fmt.Sprint(mm["email"])] = fmt.Sprint(mm["role"])
	}
	return out
}

func TestTeamCreatorBecomesOwnerAndMembersRender(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	team := w.team(t)
	assert.Equal(t, map[string]string{
		"owner@example.com": "owner", "editor@example.com": "editor", "reader@example.com": "reader",
	}, memberRoles(t, team))
	for _, m := range team["members"].([]any) {
		mm := m.(map[string]any)
		assert.NotEmpty(t, mm["id"])
		assert.NotEmpty(t, mm["name"])
	}
}

func TestTeamAccessAndFieldRules(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	globalWriter := auth.Principal{Type: auth.TypeGlobal, ID: "g1", TokenID: "g1", Permissions: []string{"team/write", "team/read"}}
	tests := []struct {
		name       string
		as         auth.Principal
		method     string
		body       string
		wantCode   int
		wantReason string
	}{
		{"reader reads", w.reader, http.MethodGet, "", 200, ""},
		{"team token reads", w.token, http.MethodGet, "", 200, ""},
		{"operator reads", w.operator, http.MethodGet, "", 200, ""},
		{"outsider cannot read", w.outsider, http.MethodGet, "", 403, "PERMISSION_DENIED"},
		{"another team's token cannot read", auth.Principal{Type: auth.TypeTeam, ID: "t2", Team: "other", Permissions: []string{"**/**"}}, http.MethodGet, "", 403, "PERMISSION_DENIED"},
		{"a principal the gateway thinks is owner but who is not", auth.Principal{Type: auth.TypeUser, ID: w.outsider.ID, Teams: map[string]string{"infra": "owner"}}, http.MethodGet, "", 403, "PERMISSION_DENIED"},
		{"reader cannot patch", w.reader, http.MethodPatch, `{"displayName":"R"}`, 403, "PERMISSION_DENIED"},
		{"team token cannot patch", w.token, http.MethodPatch, `{"displayName":"T"}`, 403, "PERMISSION_DENIED"},
		{"editor patches display name", w.editor, http.MethodPatch, `{"displayName":"Infra E"}`, 200, ""},
		{"operator patches display name", w.operator, http.MethodPatch, `{"displayName":"Infra O"}`, 200, ""},
		{"editor cannot add members", w.editor, http.MethodPatch, `{"members":[{"id":"` + w.outsider.ID + `","role":"reader"}]}`, 403, "PERMISSION_DENIED"},
		{"editor cannot invite by email", w.editor, http.MethodPatch, `{"members":[{"email":"new@example.com","role":"reader"}]}`, 403, "PERMISSION_DENIED"},
		{"editor cannot promote self", w.editor, http.MethodPatch, `{"members":[{"id":"` + w.editor.ID + `","role":"owner"}]}`, 403, "PERMISSION_DENIED"},
		{"operator cannot change roles", w.operator, http.MethodPatch, `{"members":[{"id":"` + w.reader.ID + `","role":"editor"}]}`, 403, "PERMISSION_DENIED"},
		{"editor restates members unchanged", w.editor, http.MethodPatch, `{"members":[{"id":"` + w.reader.ID + `","role":"reader"}]}`, 200, ""},
		{"editor cannot add approver groups", w.editor, http.MethodPatch, `{"approverGroups":[{"name":"leads","approvers":["` + w.editor.ID + `"]}]}`, 403, "PERMISSION_DENIED"},
		{"owner cannot change quotas", w.owner, http.MethodPatch, `{"quotas":{"maxWorkflowCount":500}}`, 403, "PERMISSION_DENIED"},
		{"owner restates the quotas in force", w.owner, http.MethodPatch, `{"quotas":{"maxWorkflowCount":100,"maxConcurrentRuns":100}}`, 200, ""},
		{"owner cannot change status", w.owner, http.MethodPatch, `{"status":"inactive"}`, 403, "PERMISSION_DENIED"},
		{"owner restates status", w.owner, http.MethodPatch, `{"status":"active"}`, 200, ""},
		{"owner sets an unknown role", w.owner, http.MethodPatch, `{"members":[{"id":"` + w.reader.ID + `","role":"boss"}]}`, 400, "TEAM_INVALID_USER_ROLE"},
		{"owner adds an unknown user id", w.owner, http.MethodPatch, `{"members":[{"id":"0123456789abcdef01234567","role":"reader"}]}`, 400, "TEAM_INVALID_REQ"},
		{"owner adds a member without id or email", w.owner, http.MethodPatch, `{"members":[{"role":"reader"}]}`, 400, "TEAM_INVALID_REQ"},
		{"owner adds a non-member approver", w.owner, http.MethodPatch, `{"approverGroups":[{"name":"leads","approvers":["outsider@example.com"]}]}`, 400, "TEAM_INVALID_REQ"},
		{"owner adds an unknown approver", w.owner, http.MethodPatch, `{"approverGroups":[{"name":"leads","approvers":["ghost@example.com"]}]}`, 400, "TEAM_INVALID_REQ"},
		{"owner promotes the reader", w.owner, http.MethodPatch, `{"members":[{"email":"reader@example.com","role":"editor"}]}`, 200, ""},
		{"admin changes quotas and status", admin, http.MethodPatch, `{"status":"inactive","quotas":{"maxWorkflowCount":7}}`, 200, ""},
		{"admin sets a negative quota", admin, http.MethodPatch, `{"quotas":{"maxConcurrentRuns":-1}}`, 400, "TEAM_INVALID_REQ"},
		{"global token with team/write patches", globalWriter, http.MethodPatch, `{"displayName":"Infra G"}`, 200, ""},
		{"global token with team/write cannot manage members", globalWriter, http.MethodPatch, `{"members":[{"id":"` + w.outsider.ID + `","role":"reader"}]}`, 403, "PERMISSION_DENIED"},
		{"editor cannot delete the team", w.editor, http.MethodDelete, "", 403, "PERMISSION_DENIED"},
		{"operator cannot delete the team", w.operator, http.MethodDelete, "", 403, "PERMISSION_DENIED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := sendAs(t, w.f, tt.as, tt.method, "/api/v2/team/infra", tt.body)
			require.Equal(t, tt.wantCode, code, out)
			if tt.wantReason != "" {
				assert.Equal(t, tt.wantReason, out["reason"])
			}
		})
	}

	team := w.team(t)
	assert.Equal(t, "inactive", team["status"])
	assert.Equal(t, "Infra G", team["displayName"])
	assert.Equal(t, map[string]string{
		"owner@example.com": "owner", "editor@example.com": "editor", "reader@example.com": "editor",
	}, memberRoles(t, team), "only the owner's role change went through")
	q := team["quotas"].(map[string]any)
	assert.Equal(t, float64(7), q["maxWorkflowCount"])
	assert.Equal(t, float64(100), q["maxConcurrentRuns"])

	// The owner deletes the team.
	code, out := sendAs(t, w.f, w.owner, http.MethodDelete, "/api/v2/team/infra", "")
	require.Equal(t, http.StatusNoContent, code, out)
}

func TestTeamCreationRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	user := signInUser(t, f, "maker@example.com")
	tests := []struct {
		name        string
		as          auth.Principal
		body        string
		wantCode    int
		wantReason  string
		wantMembers []string
	}{
		{"a user creates and owns", user, `{"name":"Made By User"}`, 201, "", []string{"maker@example.com"}},
		{"a user lists members and stays owner", user, `{"name":"with-members","members":[{"email":"maker@example.com","role":"reader"},{"email":"friend@example.com","role":"editor"}]}`, 201, "", []string{"maker@example.com", "friend@example.com"}},
		{"a first-time sign-in creates", auth.Principal{Type: auth.TypeSession, Email: "fresh@example.com"}, `{"name":"fresh"}`, 201, "", []string{"fresh@example.com"}},
		{"an admin creates a team without members", admin, `{"name":"by-admin","status":"inactive","quotas":{"maxWorkflowCount":3}}`, 201, "", []string{}},
		{"a global token with team/write creates", auth.Principal{Type: auth.TypeGlobal, ID: "g", Permissions: []string{"team/write"}}, `{"name":"by-token"}`, 201, "", []string{}},
		{"a global token without team/write cannot", auth.Principal{Type: auth.TypeGlobal, ID: "g", Permissions: []string{"workflow/write"}}, `{"name":"nope1"}`, 403, "PERMISSION_DENIED", nil},
		{"a team token cannot", auth.Principal{Type: auth.TypeTeam, ID: "t", Team: "x", Permissions: []string{"**/**"}}, `{"name":"nope2"}`, 403, "PERMISSION_DENIED", nil},
		{"a read-only user token cannot", auth.Principal{Type: auth.TypeUser, ID: user.ID, TokenID: "u", Permissions: []string{"**/read"}}, `{"name":"nope3"}`, 403, "PERMISSION_DENIED", nil},
		{"a user cannot create an inactive team", user, `{"name":"nope4","status":"inactive"}`, 403, "PERMISSION_DENIED", nil},
		{"a user cannot set quotas", user, `{"name":"nope5","quotas":{"maxWorkflowCount":1000}}`, 403, "PERMISSION_DENIED", nil},
		{"a user may restate default quotas", user, `{"name":"defaults","quotas":{"maxWorkflowCount":100}}`, 201, "", []string{"maker@example.com"}},
		{"an unknown role", user, `{"name":"nope6","members":[{"email":"x@example.com","role":"god"}]}`, 400, "TEAM_INVALID_USER_ROLE", nil},
		{"a taken name", user, `{"name":"made-by-user"}`, 422, "TEAM_NON_UNIQUE_NAME", nil},
		{"a reserved name", user, `{"name":"roles"}`, 422, "TEAM_RESERVED_NAME", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := sendAs(t, f, tt.as, http.MethodPost, "/api/v2/team", tt.body)
			require.Equal(t, tt.wantCode, code, out)
			if tt.wantReason != "" {
				assert.Equal(t, tt.wantReason, out["reason"])
				return
			}
			assert.ElementsMatch(t, tt.wantMembers, valuesOf(t, out["members"], "email"))
			for _, m := range out["members"].([]any) {
				if m.(map[string]any)["email"] == "maker@example.com" || m.(map[string]any)["email"] == "fresh@example.com" {
					assert.Equal(t, "owner", m.(map[string]any)["role"])
				}
			}
		})
	}

	// No pending user was created for the refused request with an unknown role.
	code, out := sendAs(t, f, admin, http.MethodGet, "/api/v2/user/query?status=pending", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, []string{"friend@example.com"}, valuesOf(t, out, "email"))
}

func TestMembersRemovalLeaveAndLastOwner(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	del := func(as auth.Principal, path, body string) (int, map[string]any) {
		return sendAs(t, w.f, as, http.MethodDelete, "/api/v2/team/infra"+path, body)
	}
	steps := []struct {
		name       string
		as         auth.Principal
		path       string
		body       string
		wantCode   int
		wantReason string
	}{
		{"the last owner cannot be demoted", w.owner, "", "", 0, ""},
		{"the last owner cannot be removed", w.owner, "/members", `[{"id":"` + w.owner.ID + `"}]`, 409, "TEAM_LAST_OWNER"},
		{"the last owner cannot leave", w.owner, "/leave", "", 409, "TEAM_LAST_OWNER"},
		{"an editor cannot remove members", w.editor, "/members", `[{"email":"reader@example.com"}]`, 403, "PERMISSION_DENIED"},
		{"a non-member cannot leave", w.outsider, "/leave", "", 400, "TEAM_INVALID_REQ"},
		{"a token cannot leave", w.token, "/leave", "", 400, "TEAM_INVALID_REQ"},
		{"a body that is not a list", w.owner, "/members", `{"id":"x"}`, 400, "REQUEST_INVALID"},
		{"the owner removes the reader by email, ignoring strangers", w.owner, "/members", `[{"email":"READER@example.com"},{"email":"ghost@example.com"},{"id":"0123456789abcdef01234567"}]`, 204, ""},
		{"the editor leaves", w.editor, "/leave", "", 204, ""},
	}
	for _, tt := range steps {
		if tt.wantCode == 0 {
			code, out := sendAs(t, w.f, tt.as, http.MethodPatch, "/api/v2/team/infra", `{"members":[{"id":"`+w.owner.ID+`","role":"editor"}]}`)
			require.Equal(t, http.StatusConflict, code, "%s: %v", tt.name, out)
			assert.Equal(t, "TEAM_LAST_OWNER", out["reason"])
			continue
		}
		code, out := del(tt.as, tt.path, tt.body)
		require.Equal(t, tt.wantCode, code, "%s: %v", tt.name, out)
		if tt.wantReason != "" {
			assert.Equal(t, tt.wantReason, out["reason"], tt.name)
		}
	}
	assert.Equal(t, map[string]string{"owner@example.com": "owner"}, memberRoles(t, w.team(t)))
	code, out := sendAs(t, w.f, w.owner, http.MethodDelete, "/api/v2/team/nope/leave", "")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "TEAM_NOT_FOUND", out["reason"])

	// With a second owner, the first may leave.
	code, out = sendAs(t, w.f, w.owner, http.MethodPatch, "/api/v2/team/infra", `{"members":[{"id":"`+w.outsider.ID+`","role":"owner"}]}`)
	require.Equal(t, http.StatusOK, code, out)
	code, out = del(w.owner, "/leave", "")
	require.Equal(t, http.StatusNoContent, code, out)
	assert.Equal(t, map[string]string{"outsider@example.com": "owner"}, memberRoles(t, w.team(t)))
	code, _ = sendAs(t, w.f, w.owner, http.MethodGet, "/api/v2/team/infra", "")
	assert.Equal(t, http.StatusForbidden, code, "a former owner loses access at once")
}

func TestApproverGroups(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	code, team := sendAs(t, w.f, w.owner, http.MethodPatch, "/api/v2/team/infra", `{"approverGroups":[
		{"name":"leads","approvers":["editor@example.com",{"id":"`+w.reader.ID+`"}]},
		{"name":"ops","approvers":[{"email":"owner@example.com"}]},
		{"name":"empty","approvers":[]}]}`)
	require.Equal(t, http.StatusOK, code, team)
	groups := map[string]map[string]any{}
	for _, g := range team["approverGroups"].([]any) {
		groups[g.(map[string]any)["name"].(string)] = g.(map[string]any)
	}
	require.Len(t, groups, 3)
	assert.ElementsMatch(t, []string{"editor@example.com", "reader@example.com"}, valuesOf(t, groups["leads"]["approvers"], "email"))
	assert.ElementsMatch(t, []string{"editor", "reader"}, valuesOf(t, groups["leads"]["approvers"], "role"))

	// Upsert by name: approvers replaced; omitted approvers are kept.
	code, team = sendAs(t, w.f, w.owner, http.MethodPatch, "/api/v2/team/infra",
		`{"approverGroups":[{"name":"leads","approvers":["owner@example.com"]},{"name":"ops"}]}`)
	require.Equal(t, http.StatusOK, code, team)
	for _, g := range team["approverGroups"].([]any) {
		gm := g.(map[string]any)
		switch gm["name"] {
		case "leads", "ops":
			assert.Equal(t, []string{"owner@example.com"}, valuesOf(t, gm["approvers"], "email"), gm["name"])
		}
	}

	// Removing a member takes them out of approver groups too.
	code, out := sendAs(t, w.f, w.owner, http.MethodPatch, "/api/v2/team/infra",
		`{"approverGroups":[{"name":"leads","approvers":["reader@example.com","editor@example.com"]}]}`)
	require.Equal(t, http.StatusOK, code, out)
	code, out = sendAs(t, w.f, w.owner, http.MethodDelete, "/api/v2/team/infra/members", `["reader@example.com"]`)
	require.Equal(t, http.StatusNoContent, code, out)
	team = w.team(t)
	for _, g := range team["approverGroups"].([]any) {
		if g.(map[string]any)["name"] == "leads" {
			assert.Equal(t, []string{"editor@example.com"}, valuesOf(t, g.(map[string]any)["approvers"], "email"))
		}
	}

	tests := []struct {
		name     string
		as       auth.Principal
		path     string
		body     string
		wantCode int
		wantLeft []string
	}{
		{"an editor cannot delete groups", w.editor, "/approvers", `["` + groups["ops"]["id"].(string) + `"]`, 403, []string{"leads", "ops", "empty"}},
		{"the owner deletes by the list form, ignoring unknown ids", w.owner, "/approvers", `["` + groups["ops"]["id"].(string) + `","nope"]`, 204, []string{"leads", "empty"}},
		{"the owner deletes by the v4 path", w.owner, "/approvers/" + groups["empty"]["id"].(string), "", 204, []string{"leads"}},
		{"an admin deletes", admin, "/approvers", `["` + groups["leads"]["id"].(string) + `"]`, 204, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := sendAs(t, w.f, tt.as, http.MethodDelete, "/api/v2/team/infra"+tt.path, tt.body)
			require.Equal(t, tt.wantCode, code, out)
			assert.ElementsMatch(t, tt.wantLeft, valuesOf(t, w.team(t)["approverGroups"], "name"))
		})
	}
}

func TestTeamParametersMaskSecrets(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	patch := func(as auth.Principal, body string) (int, map[string]any) {
		return sendAs(t, w.f, as, http.MethodPatch, "/api/v2/team/infra", body)
	}
	params := func(team map[string]any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, p := range team["parameters"].([]any) {
			out[p.(map[string]any)["name"].(string)] = p.(map[string]any)
		}
		return out
	}
	code, team := patch(w.editor, `{"parameters":[
		{"name":"region","type":"text","value":"eu-west-1","label":"Region","helpertext":"where"},
		{"name":"db","type":"password","value":"s3cret","default":"d3fault"},
		{"name":"tags","type":"multiselect","value":["a","b"],"options":[{"key":"a","value":"A"}]},
		{"name":"cfg","type":"json","value":{"x":{"y":1}}}]}`)
	require.Equal(t, http.StatusOK, code, team)
	got := params(team)
	assert.Equal(t, "eu-west-1", got["region"]["value"])
	assert.Equal(t, "where", got["region"]["helpertext"])
	assert.Equal(t, "********", got["db"]["value"])
	assert.Equal(t, "********", got["db"]["default"])
	assert.Equal(t, []any{"a", "b"}, got["tags"]["value"])
	assert.Equal(t, map[string]any{"x": map[string]any{"y": float64(1)}}, got["cfg"]["value"])

	code, raw := sendAsRaw(t, w.f, w.reader, http.MethodGet, "/api/v2/team/infra", "")
	require.Equal(t, http.StatusOK, code)
	assert.NotContains(t, string(raw), "s3cret")
	assert.NotContains(t, string(raw), "d3fault")

	steps := []struct {
		name      string
		body      string
		wantValue any
	}{
		{"the mask sent back keeps the secret", `{"parameters":[{"name":"db","type":"password","value":"********","label":"DB"}]}`, "********"},
		{"an omitted value keeps the secret", `{"parameters":[{"name":"db","type":"password","label":"Database"}]}`, "********"},
		{"a new value replaces it, masked", `{"parameters":[{"name":"db","type":"password","value":"n3w"}]}`, "********"},
		{"a new secret parameter sent with the mask has no value", `{"parameters":[{"name":"api","type":"password","value":"********"}]}`, nil},
	}
	for _, tt := range steps {
		code, team := patch(w.owner, tt.body)
		require.Equal(t, http.StatusOK, code, "%s: %v", tt.name, team)
		name := "db"
		if tt.wantValue == nil {
			name = "api"
		}
		assert.Equal(t, tt.wantValue, params(team)[name]["value"], tt.name)
	}

	dels := []struct {
		name       string
		as         auth.Principal
		param      string
		wantCode   int
		wantReason string
	}{
		{"a reader cannot delete", w.reader, "region", 403, "PERMISSION_DENIED"},
		{"an editor deletes", w.editor, "region", 204, ""},
		{"a missing parameter", w.editor, "region", 404, "PARAMS_NOT_FOUND"},
		{"an unknown team", w.editor, "/api/v2/team/nope/parameters/x", 404, "TEAM_NOT_FOUND"},
	}
	for _, tt := range dels {
		t.Run(tt.name, func(t *testing.T) {
			path := "/api/v2/team/infra/parameters/" + tt.param
			if strings.HasPrefix(tt.param, "/") {
				path = tt.param
			}
			code, out := sendAs(t, w.f, tt.as, http.MethodDelete, path, "")
			require.Equal(t, tt.wantCode, code, out)
			if tt.wantReason != "" {
				assert.Equal(t, tt.wantReason, out["reason"])
			}
		})
	}
	assert.NotContains(t, params(w.team(t)), "region")
}

func TestTeamQuotasRolesAndDefaults(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	defaults := map[string]any{
		"maxWorkflowCount": float64(100), "maxWorkflowRunMonthly": float64(100000), "maxWorkflowStorage": float64(25),
		"maxWorkflowRunStorage": float64(2), "maxWorkflowRunDuration": float64(1440), "maxConcurrentRuns": float64(100),
	}
	code, out := sendAs(t, w.f, w.reader, http.MethodGet, "/api/v2/team/quotas/default", "")
	require.Equal(t, http.StatusOK, code, out)
	assert.Equal(t, defaults, out)

	q := w.team(t)["quotas"].(map[string]any)
	for k, v := range defaults {
		assert.Equal(t, v, q[k], k)
	}
	for _, k := range []string{"currentWorkflowCount", "currentRuns", "currentConcurrentRuns", "currentRunTotalDuration", "currentRunMedianDuration"} {
		assert.Equal(t, float64(0), q[k], k)
	}
	reset, err := time.Parse(time.RFC3339, q["monthlyResetDate"].(string))
	require.NoError(t, err)
	assert.Equal(t, 1, reset.Day())
	assert.True(t, reset.After(time.Now()))

	code, out = sendAs(t, w.f, admin, http.MethodPatch, "/api/v2/team/infra", `{"quotas":{"maxWorkflowCount":5,"maxConcurrentRuns":2}}`)
	require.Equal(t, http.StatusOK, code, out)
	assert.Equal(t, float64(5), out["quotas"].(map[string]any)["maxWorkflowCount"])
	assert.Equal(t, float64(1440), out["quotas"].(map[string]any)["maxWorkflowRunDuration"])

	resets := []struct {
		name     string
		as       auth.Principal
		wantCode int
		wantMax  float64
	}{
		{"the owner cannot reset quotas", w.owner, 403, 5},
		{"an operator cannot reset quotas", w.operator, 403, 5},
		{"an admin resets them", admin, 204, 100},
	}
	for _, tt := range resets {
		t.Run(tt.name, func(t *testing.T) {
			code, out := sendAs(t, w.f, tt.as, http.MethodDelete, "/api/v2/team/infra/quotas", "")
			require.Equal(t, tt.wantCode, code, out)
			assert.Equal(t, tt.wantMax, w.team(t)["quotas"].(map[string]any)["maxWorkflowCount"])
		})
	}

	code, raw := sendAsRaw(t, w.f, w.outsider, http.MethodGet, "/api/v2/team/roles", "")
	require.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `[
		{"name":"owner","description":"Everything in the team, including its members, approver groups and deletion.","permissions":["**/**"]},
		{"name":"editor","description":"Reads, writes and runs everything in the team; cannot delete or manage members.","permissions":["**/read","**/write","**/action"]},
		{"name":"reader","description":"Reads everything in the team.","permissions":["**/read"]}]`, string(raw))
}

func TestTeamQueryVisibility(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	for _, body := range []string{`{"name":"alpha"}`, `{"name":"bravo"}`} {
		code, out := sendAs(t, w.f, w.outsider, http.MethodPost, "/api/v2/team", body)
		require.Equal(t, http.StatusCreated, code, out)
	}
	code, out := sendAs(t, w.f, admin, http.MethodPost, "/api/v2/team", `{"name":"charlie"}`)
	require.Equal(t, http.StatusCreated, code, out)

	tests := []struct {
		name  string
		as    auth.Principal
		query string
		want  []string
	}{
		{"admin sees all", admin, "", []string{"infra", "charlie", "bravo", "alpha"}},
		{"operator sees all", w.operator, "", []string{"infra", "charlie", "bravo", "alpha"}},
		{"global token with team/read sees all", auth.Principal{Type: auth.TypeGlobal, ID: "g", Permissions: []string{"team/read"}}, "", []string{"infra", "charlie", "bravo", "alpha"}},
		{"global token without team/read sees none", auth.Principal{Type: auth.TypeGlobal, ID: "g", Permissions: []string{"workflow/read"}}, "", []string{}},
		{"a member sees their teams", w.reader, "", []string{"infra"}},
		{"a creator sees theirs", w.outsider, "?order=asc", []string{"alpha", "bravo"}},
		{"filters narrow a member's teams", w.outsider, "?teams=bravo,infra", []string{"bravo"}},
		{"a user with no teams sees none", signInUser(t, w.f, "lonely@example.com"), "", []string{}},
		{"a team token sees its team", w.token, "", []string{"infra"}},
		{"a team token asking for others sees none", w.token, "?teams=alpha", []string{}},
		{"a workflow token sees none", auth.Principal{Type: auth.TypeWorkflow, ID: "w", Team: "infra", Workflow: "build", Permissions: []string{"**/**"}}, "", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := sendAs(t, w.f, tt.as, http.MethodGet, "/api/v2/team/query"+tt.query, "")
			require.Equal(t, http.StatusOK, code, out)
			assert.Equal(t, tt.want, valuesOf(t, out, "name"))
			assert.Equal(t, float64(len(tt.want)), out["totalElements"])
		})
	}
}

func TestConcurrentMemberChangesAllLand(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	// Each writer that wins leaves the race, so n writers lose at most n-1 times each: within
	// the store's retry budget.
	const n = 5
	var wg sync.WaitGroup
	codes := make([]int, n)
	errs := make([]error, n)
	for i := range n {
		req := httptest.NewRequest(http.MethodPatch, "/api/v2/team/infra", strings.NewReader(
			fmt.Sprintf(`{"members":[{"email":"crowd%d@example.com","role":"reader"}],"labels":{"k%d":"v"}}`, i, i)))
		req.Header.Set("Content-Type", "application/json")
		require.NoError(t, w.f.signer.SetHeaders(w.owner, req.Header.Set))
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := w.f.app.Test(req, -1)
			if err != nil {
				errs[i] = err
				return
			}
			codes[i] = resp.StatusCode
			errs[i] = resp.Body.Close()
		}()
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, http.StatusOK, codes[i], "request %d", i)
	}
	team := w.team(t)
	got := memberRoles(t, team)
	for i := range n {
		assert.Equal(t, "reader", got[fmt.Sprintf("crowd%d@example.com", i)])
	}
	assert.Len(t, team["labels"], n)
}

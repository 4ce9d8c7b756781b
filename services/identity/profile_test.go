package identity_test

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/services/identity"
)

func TestProfileRegistersAndDescribesUsers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	session := auth.Principal{Type: auth.TypeSession, Email: "Ann@Example.com", Name: "Ann Smith"}
	code, first := sendAs(t, f, session, http.MethodGet, "/api/v2/profile", "")
	require.Equal(t, http.StatusOK, code, first)
	assert.Equal(t, "ann@example.com", first["email"])
	assert.Equal(t, "Ann Smith", first["name"])
	assert.Equal(t, "user", first["type"])
	assert.Equal(t, "active", first["status"])
	assert.Equal(t, "session", first["principalType"])
	assert.NotEmpty(t, first["lastLoginDate"])
	assert.Equal(t, []any{}, first["teams"])
	assert.Equal(t, []any{}, first["permissions"])

	code, again := sendAs(t, f, session, http.MethodGet, "/api/v2/profile", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, first["id"], again["id"], "a second sign-in finds the same user")
	ann := auth.Principal{Type: auth.TypeUser, ID: first["id"].(string), Email: "ann@example.com"}

	// Ann creates a team and is invited to another as reader.
	code, out := sendAs(t, f, ann, http.MethodPost, "/api/v2/team", `{"name":"Ann Team"}`)
	require.Equal(t, http.StatusCreated, code, out)
	code, out = sendAs(t, f, admin, http.MethodPost, "/api/v2/team", `{"name":"ops","members":[{"email":"ann@example.com","role":"reader"}]}`)
	require.Equal(t, http.StatusCreated, code, out)
	code, out = sendAs(t, f, admin, http.MethodPatch, "/api/v2/user/"+ann.ID, `{"type":"operator"}`)
	require.Equal(t, http.StatusNoContent, code, out)

	code, prof := sendAs(t, f, ann, http.MethodGet, "/api/v2/profile", "")
	require.Equal(t, http.StatusOK, code, prof)
	assert.Equal(t, "operator", prof["type"])
	assert.ElementsMatch(t, []any{
		map[string]any{"name": "ann-team", "displayName": "Ann Team", "role": "owner", "status": "active", "labels": map[string]any{},
			"insights": map[string]any{"members": float64(1), "actions": float64(0)}},
		map[string]any{"name": "ops", "displayName": "ops", "role": "reader", "status": "active", "labels": map[string]any{},
			"insights": map[string]any{"members": float64(1), "actions": float64(0)}},
	}, withoutCreationDates(t, prof["teams"]))
	assert.ElementsMatch(t, []any{"**/read", "**/write", "**/action", "ann-team:**/**", "ops:**/read"}, prof["permissions"])

	patches := []struct {
		name     string
		as       auth.Principal
		body     string
		wantCode int
	}{
		{"name, displayName and labels", ann, `{"name":"Ann S","displayName":"Annie","labels":{"team":"blue"}}`, 204},
		{"restating type and status", ann, `{"type":"operator","status":"active","email":"ann@example.com"}`, 204},
		{"type", ann, `{"type":"admin"}`, 403},
		{"status", ann, `{"status":"inactive"}`, 403},
		{"email", ann, `{"email":"someone@example.com"}`, 403},
		{"a read-only user token", auth.Principal{Type: auth.TypeUser, ID: ann.ID, TokenID: "t", Permissions: []string{"**/read"}}, `{"name":"x"}`, 403},
		{"a team token has no profile to change", auth.Principal{Type: auth.TypeTeam, ID: "t", Team: "ops", Permissions: []string{"**/**"}}, `{"name":"x"}`, 400},
		{"not JSON", ann, `{"name":`, 400},
	}
	for _, tt := range patches {
		t.Run("PATCH "+tt.name, func(t *testing.T) {
			code, out := sendAs(t, f, tt.as, http.MethodPatch, "/api/v2/profile", tt.body)
			require.Equal(t, tt.wantCode, code, out)
		})
	}
	code, prof = sendAs(t, f, ann, http.MethodGet, "/api/v2/profile", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "Ann S", prof["name"])
	assert.Equal(t, "Annie", prof["displayName"])
	assert.Equal(t, map[string]any{"team": "blue"}, prof["labels"])
	assert.Equal(t, "operator", prof["type"])
}

func TestProfileActivatesInvitedUsers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	code, out := sendAs(t, f, admin, http.MethodPost, "/api/v2/team", `{"name":"infra","members":[{"email":"new@example.com","role":"editor"}]}`)
	require.Equal(t, http.StatusCreated, code, out)
	id := out["members"].([]any)[0].(map[string]any)["id"].(string)
	code, u := sendAs(t, f, admin, http.MethodGet, "/api/v2/user/"+id, "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "pending", u["status"])
	assert.Equal(t, "new", u["name"])
	assert.Nil(t, u["lastLoginDate"])

	code, prof := sendAs(t, f, auth.Principal{Type: auth.TypeSession, Email: "NEW@example.com", Name: "New Person"}, http.MethodGet, "/api/v2/profile", "")
	require.Equal(t, http.StatusOK, code, prof)
	assert.Equal(t, id, prof["id"])
	assert.Equal(t, "active", prof["status"])
	assert.Equal(t, "New Person", prof["name"])
	assert.Equal(t, []any{map[string]any{"name": "infra", "displayName": "infra", "role": "editor", "status": "active",
		"labels": map[string]any{}, "insights": map[string]any{"members": float64(1), "actions": float64(0)}}},
		withoutCreationDates(t, prof["teams"]))
}

func TestProfileOfPrincipalsThatAreNotUsers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	code, out := sendAs(t, f, admin, http.MethodPost, "/api/v2/team", `{"name":"infra","displayName":"Infrastructure"}`)
	require.Equal(t, http.StatusCreated, code, out)
	infraSummary := map[string]any{"name": "infra", "displayName": "Infrastructure", "status": "active", "labels": map[string]any{},
		"insights": map[string]any{"members": float64(0), "actions": float64(0)}}
	tests := []struct {
		name string
		as   auth.Principal
		want map[string]any
	}{
		{"bootstrap admin token", admin, map[string]any{
			"id": "bootstrap", "type": "admin", "status": "active", "principalType": "global",
			"teams": []any{}, "permissions": []any{"**/**"},
		}},
		{"team token", auth.Principal{Type: auth.TypeTeam, ID: "tok", Name: "ci", Team: "infra", Permissions: []string{"workflow/read"}}, map[string]any{
			"id": "tok", "name": "ci", "status": "active", "principalType": "team",
			"teams": []any{infraSummary}, "permissions": []any{"infra:workflow/read"},
		}},
		{"workflow token", auth.Principal{Type: auth.TypeWorkflow, ID: "wt", Team: "infra", Workflow: "build", Permissions: []string{"workflowrun/write"}}, map[string]any{
			"id": "wt", "status": "active", "principalType": "workflow",
			"teams": []any{infraSummary}, "permissions": []any{"infra/build:workflowrun/write"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := sendAs(t, f, tt.as, http.MethodGet, "/api/v2/profile", "")
			require.Equal(t, http.StatusOK, code, out)
			out["teams"] = withoutCreationDates(t, out["teams"])
			assert.Equal(t, tt.want, out)
		})
	}

	// A user credential without a record and without an email cannot be registered.
	code, out = sendAs(t, f, auth.Principal{Type: auth.TypeUser, ID: "0123456789abcdef01234567"}, http.MethodGet, "/api/v2/profile", "")
	assert.Equal(t, http.StatusNotFound, code, out)
	assert.Equal(t, "USER_NOT_FOUND", out["reason"])
}

// withoutCreationDates checks that each team summary has a creation date and drops it, so
// the rest compares exactly.
func withoutCreationDates(t *testing.T, teams any) []any {
	t.Helper()
	list, ok := teams.([]any)
	require.True(t, ok, "teams: %v", teams)
	out := make([]any, len(list))
	for i, item := range list {
		m := maps.Clone(item.(map[string]any))
		assert.NotEmpty(t, m["creationDate"], "team %v", m["name"])
		delete(m, "creationDate")
		out[i] = m
	}
	return out
}

// The profile's teams are v4's team summaries: the team's record and what it holds, the
// workflow count from the workflows service. A count that service cannot give is left out
// rather than failing the profile, which the UI reads on every page.
func TestProfileTeamSummaries(t *testing.T) {
	t.Parallel()
	var asked atomic.Int32
	var greyDown atomic.Bool
	workflows := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		counts := map[string]int{"/internal/v1/teams/blue/usage": 3, "/internal/v1/teams/green/usage": 0, "/internal/v1/teams/grey/usage": 5}
		n, ok := counts[r.URL.Path]
		if !ok || (greyDown.Load() && r.URL.Path == "/internal/v1/teams/grey/usage") {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"currentWorkflowCount":%d}`, n)
	}))
	t.Cleanup(workflows.Close)
	f := newFixtureWith(t, func(d *identity.Deps) {
		d.Resolver = registry.NewStatic(map[string][]string{"workflows": {workflows.URL}})
	})
	session := auth.Principal{Type: auth.TypeSession, Email: "sam@example.com", Name: "Sam"}
	code, out := sendAs(t, f, session, http.MethodGet, "/api/v2/profile", "")
	require.Equal(t, http.StatusOK, code, out)
	sam := auth.Principal{Type: auth.TypeUser, ID: out["id"].(string), Email: "sam@example.com"}
	for _, body := range []string{
		`{"name":"blue","displayName":"Blue Team","externalRef":"ext-1","labels":{"tier":"1"},"members":[{"email":"pat@example.com","role":"reader"}]}`,
		`{"name":"green"}`,
		`{"name":"grey"}`,
	} {
		code, out := sendAs(t, f, sam, http.MethodPost, "/api/v2/team", body)
		require.Equal(t, http.StatusCreated, code, out)
	}
	greyDown.Store(true)

	asked.Store(0)
	code, prof := sendAs(t, f, sam, http.MethodGet, "/api/v2/profile", "")
	require.Equal(t, http.StatusOK, code, prof)
	byName := map[string]map[string]any{}
	for _, item := range prof["teams"].([]any) {
		team := item.(map[string]any)
		byName[team["name"].(string)] = team
	}
	require.Len(t, byName, 3)
	blue := byName["blue"]
	assert.Equal(t, "Blue Team", blue["displayName"])
	assert.Equal(t, "ext-1", blue["externalRef"])
	assert.Equal(t, "active", blue["status"])
	assert.Equal(t, map[string]any{"tier": "1"}, blue["labels"])
	assert.Equal(t, "owner", blue["role"])
	assert.NotEmpty(t, blue["creationDate"])
	tests := []struct {
		team string
		want map[string]any
	}{
		{"blue", map[string]any{"workflows": float64(3), "members": float64(2), "actions": float64(0)}},
		{"green", map[string]any{"workflows": float64(0), "members": float64(1), "actions": float64(0)}},
		{"grey", map[string]any{"members": float64(1), "actions": float64(0)}}, // the count failed
	}
	for _, tt := range tests {
		t.Run(tt.team, func(t *testing.T) {
			assert.Equal(t, tt.want, byName[tt.team]["insights"])
		})
	}
	assert.GreaterOrEqual(t, asked.Load(), int32(3))
}

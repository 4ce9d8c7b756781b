package identity_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
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
		map[string]any{"name": "ann-team", "displayName": "Ann Team", "role": "owner"},
		map[string]any{"name": "ops", "displayName": "ops", "role": "reader"},
	}, prof["teams"])
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
	assert.Equal(t, []any{map[string]any{"name": "infra", "displayName": "infra", "role": "editor"}}, prof["teams"])
}

func TestProfileOfPrincipalsThatAreNotUsers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	code, out := sendAs(t, f, admin, http.MethodPost, "/api/v2/team", `{"name":"infra","displayName":"Infrastructure"}`)
	require.Equal(t, http.StatusCreated, code, out)
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
			"teams": []any{map[string]any{"name": "infra", "displayName": "Infrastructure"}}, "permissions": []any{"infra:workflow/read"},
		}},
		{"workflow token", auth.Principal{Type: auth.TypeWorkflow, ID: "wt", Team: "infra", Workflow: "build", Permissions: []string{"workflowrun/write"}}, map[string]any{
			"id": "wt", "status": "active", "principalType": "workflow",
			"teams": []any{map[string]any{"name": "infra", "displayName": "Infrastructure"}}, "permissions": []any{"infra/build:workflowrun/write"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := sendAs(t, f, tt.as, http.MethodGet, "/api/v2/profile", "")
			require.Equal(t, http.StatusOK, code, out)
			assert.Equal(t, tt.want, out)
		})
	}

	// A user credential without a record and without an email cannot be registered.
	code, out = sendAs(t, f, auth.Principal{Type: auth.TypeUser, ID: "0123456789abcdef01234567"}, http.MethodGet, "/api/v2/profile", "")
	assert.Equal(t, http.StatusNotFound, code, out)
	assert.Equal(t, "USER_NOT_FOUND", out["reason"])
}

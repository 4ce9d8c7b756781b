package identity_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
)

// sendAsRaw sends a request as p and returns the status and the raw body.
func sendAsRaw(t *testing.T, f *fixture, p auth.Principal, method, path, body string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Content-Type", "application/json")
	require.NoError(t, f.signer.SetHeaders(p, req.Header.Set))
	resp, err := f.app.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw
}

// sendAs sends a request as p and decodes a JSON object answer.
func sendAs(t *testing.T, f *fixture, p auth.Principal, method, path, body string) (int, map[string]any) {
	t.Helper()
	code, raw := sendAsRaw(t, f, p, method, path, body)
	var out map[string]any
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	}
	return code, out
}

// signInUser registers (or finds) the user with email the way a verified JWT sign-in does, a
// session principal calling GET /profile, and returns the principal the gateway would then
// forward for them.
func signInUser(t *testing.T, f *fixture, email string) auth.Principal {
	t.Helper()
	code, prof := sendAs(t, f, auth.Principal{Type: auth.TypeSession, Email: email},
		http.MethodGet, "/api/v2/profile", "")
	require.Equal(t, http.StatusOK, code, prof)
	return auth.Principal{Type: auth.TypeUser, ID: prof["id"].(string), Email: email}
}

// valuesOf lists the values of key in the objects of a page's content or of a list.
func valuesOf(t *testing.T, list any, key string) []string {
	t.Helper()
	if m, ok := list.(map[string]any); ok {
		list = m["content"]
	}
	out := []string{}
	for _, item := range list.([]any) {
		out = append(out, fmt.Sprint(item.(map[string]any)[key]))
	}
	return out
}

func TestUserReadAndPatchRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	alice := signInUser(t, f, "alice@example.com")
	bob := signInUser(t, f, "Bob@Example.com")
	operator := signInUser(t, f, "olga@example.com")
	code, _ := sendAs(t, f, admin, http.MethodPatch, "/api/v2/user/"+operator.ID, `{"type":"operator"}`)
	require.Equal(t, http.StatusNoContent, code)
	operator.Roles = []string{"operator"}

	reads := []struct {
		name     string
		as       auth.Principal
		id       string
		wantCode int
	}{
		{"self", alice, alice.ID, 200},
		{"another user", bob, alice.ID, 403},
		{"admin", admin, alice.ID, 200},
		{"operator", operator, alice.ID, 200},
		{"team token", auth.Principal{Type: auth.TypeTeam, ID: "t", Team: "infra", Permissions: []string{"**/**"}}, alice.ID, 403},
		{"unknown id", admin, "0123456789abcdef01234567", 404},
		{"not an id", admin, "nope", 404},
	}
	for _, tt := range reads {
		t.Run("GET "+tt.name, func(t *testing.T) {
			code, out := sendAs(t, f, tt.as, http.MethodGet, "/api/v2/user/"+tt.id, "")
			require.Equal(t, tt.wantCode, code, out)
			if code == 200 {
				assert.Equal(t, "alice@example.com", out["email"])
				assert.Equal(t, "user", out["type"])
				assert.Equal(t, "active", out["status"])
				assert.NotEmpty(t, out["creationDate"])
				assert.NotEmpty(t, out["lastLoginDate"])
			}
			if code == 404 {
				assert.Equal(t, "USER_NOT_FOUND", out["reason"])
			}
		})
	}

	patches := []struct {
		name     string
		as       auth.Principal
		id       string
		body     string
		wantCode int
	}{
		{"self renames", alice, alice.ID, `{"name":"Alice A","displayName":"Al","labels":{"tz":"CET"}}`, 204},
		{"self restates own type", alice, alice.ID, `{"type":"user","status":"active"}`, 204},
		{"self makes self admin", alice, alice.ID, `{"type":"admin"}`, 403},
		{"self deactivates self", alice, alice.ID, `{"status":"inactive"}`, 403},
		{"self changes email", alice, alice.ID, `{"email":"other@example.com"}`, 403},
		{"another user", bob, alice.ID, `{"name":"x"}`, 403},
		{"operator renames", operator, alice.ID, `{"displayName":"Alice"}`, 204},
		{"operator changes type", operator, alice.ID, `{"type":"admin"}`, 403},
		{"admin sets an unknown type", admin, alice.ID, `{"type":"root"}`, 400},
		{"admin sets deleted through PATCH", admin, alice.ID, `{"status":"deleted"}`, 400},
		{"admin takes an email in use", admin, alice.ID, `{"email":"bob@example.com"}`, 409},
		{"admin sets an invalid email", admin, alice.ID, `{"email":"not an email"}`, 400},
		{"unknown user", admin, "0123456789abcdef01234567", `{"name":"x"}`, 404},
	}
	for _, tt := range patches {
		t.Run("PATCH "+tt.name, func(t *testing.T) {
			code, out := sendAs(t, f, tt.as, http.MethodPatch, "/api/v2/user/"+tt.id, tt.body)
			require.Equal(t, tt.wantCode, code, out)
			if code == 403 {
				assert.Equal(t, "PERMISSION_DENIED", out["reason"])
			}
		})
	}

	code, got := sendAs(t, f, alice, http.MethodGet, "/api/v2/user/"+alice.ID, "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "Alice A", got["name"])
	assert.Equal(t, "Alice", got["displayName"])
	assert.Equal(t, map[string]any{"tz": "CET"}, got["labels"])
	assert.Equal(t, "user", got["type"])

	// An admin deactivates Bob: his credentials stop working for his profile.
	code, _ = sendAs(t, f, admin, http.MethodPatch, "/api/v2/user/"+bob.ID, `{"status":"inactive"}`)
	require.Equal(t, http.StatusNoContent, code)
	code, out := sendAs(t, f, bob, http.MethodGet, "/api/v2/profile", "")
	assert.Equal(t, http.StatusUnauthorized, code, out)
}

func TestUserQueryVisibility(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	carol := signInUser(t, f, "carol@example.com")
	signInUser(t, f, "alice@example.com")
	bob := signInUser(t, f, "bob@example.com")
	code, _ := sendAs(t, f, admin, http.MethodPatch, "/api/v2/user/"+bob.ID, `{"status":"inactive","labels":{"dept":"ops"}}`)
	require.Equal(t, http.StatusNoContent, code)
	// Carol's team invites dave, who becomes a pending user.
	code, out := sendAs(t, f, carol, http.MethodPost, "/api/v2/team", `{"name":"crew","members":[{"email":"dave@example.com","role":"reader"}]}`)
	require.Equal(t, http.StatusCreated, code, out)

	tests := []struct {
		name      string
		as        auth.Principal
		query     string
		wantCode  int
		wantNames []string
		wantTotal float64
	}{
		{"admin, default name descending", admin, "", 200, []string{"dave", "carol", "bob", "alice"}, 4},
		{"admin ascending", admin, "?order=ASC", 200, []string{"alice", "bob", "carol", "dave"}, 4},
		{"admin by status", admin, "?status=inactive,pending&order=asc", 200, []string{"bob", "dave"}, 2},
		{"admin by labels", admin, "?labels=dept%3Dops", 200, []string{"bob"}, 1},
		{"admin by ids", admin, "?ids=" + carol.ID + "," + bob.ID + ",junk&order=asc", 200, []string{"bob", "carol"}, 2},
		{"ids that name nobody", admin, "?ids=junk", 200, []string{}, 0},
		{"admin paging keeps the total", admin, "?limit=1&page=1&order=asc", 200, []string{"bob"}, 4},
		{"user sees active users only", carol, "?order=asc", 200, []string{"alice", "carol"}, 2},
		{"user asking for inactive users gets none", carol, "?status=inactive", 200, []string{}, 0},
		{"bad sort", admin, "?sort=email", 400, nil, 0},
		{"bad order", admin, "?order=up", 400, nil, 0},
		{"page past the bound", admin, "?page=9223372036854775807", 400, nil, 0},
		{"NUL in a label key", admin, "?labels=a%00b%3Dc", 400, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := sendAs(t, f, tt.as, http.MethodGet, "/api/v2/user/query"+tt.query, "")
			require.Equal(t, tt.wantCode, code, out)
			if code != 200 {
				assert.Equal(t, "QUERY_INVALID_FILTERS", out["reason"])
				return
			}
			assert.Equal(t, tt.wantNames, valuesOf(t, out, "name"))
			assert.Equal(t, tt.wantTotal, out["totalElements"])
		})
	}

	// Non-admins see only id, name, displayName and email.
	_, out = sendAs(t, f, carol, http.MethodGet, "/api/v2/user/query", "")
	for _, u := range out["content"].([]any) {
		for k := range u.(map[string]any) {
			assert.Contains(t, []string{"id", "name", "displayName", "email"}, k)
		}
	}
}

func TestUserDeletion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	owner := signInUser(t, f, "owner@example.com")
	member := signInUser(t, f, "member@example.com")
	code, out := sendAs(t, f, owner, http.MethodPost, "/api/v2/team",
		`{"name":"infra","members":[{"id":"`+member.ID+`","role":"editor"}]}`)
	require.Equal(t, http.StatusCreated, code, out)

	steps := []struct {
		name       string
		as         auth.Principal
		id         string
		wantCode   int
		wantReason string
	}{
		{"a user cannot delete users", owner, member.ID, 403, "PERMISSION_DENIED"},
		{"an operator cannot delete users", auth.Principal{Type: auth.TypeUser, ID: "x", Roles: []string{"operator"}}, member.ID, 403, "PERMISSION_DENIED"},
		{"the last owner of a team cannot be deleted", admin, owner.ID, 409, "TEAM_LAST_OWNER"},
		{"unknown user", admin, "0123456789abcdef01234567", 404, "USER_NOT_FOUND"},
		{"a member is deleted", admin, member.ID, 204, ""},
		{"deleting again completes the cleanup", admin, member.ID, 204, ""},
	}
	for _, tt := range steps {
		code, out := sendAs(t, f, tt.as, http.MethodDelete, "/api/v2/user/"+tt.id, "")
		require.Equal(t, tt.wantCode, code, "%s: %v", tt.name, out)
		if tt.wantReason != "" {
			assert.Equal(t, tt.wantReason, out["reason"], tt.name)
		}
	}

	code, team := sendAs(t, f, owner, http.MethodGet, "/api/v2/team/infra", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, []string{owner.ID}, valuesOf(t, team["members"], "id"), "memberships removed")
	code, u := sendAs(t, f, admin, http.MethodGet, "/api/v2/user/"+member.ID, "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "deleted", u["status"])
	code, _ = sendAs(t, f, member, http.MethodGet, "/api/v2/profile", "")
	assert.Equal(t, http.StatusUnauthorized, code, "a deleted user's credentials stop working")

	// Adding the deleted user back to a team is refused.
	code, out = sendAs(t, f, owner, http.MethodPatch, "/api/v2/team/infra", `{"members":[{"email":"member@example.com","role":"reader"}]}`)
	assert.Equal(t, http.StatusBadRequest, code, out)
}

package identity_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
)

// signIn asks the internal endpoint about a verified sign-in, as the gateway does after
// checking a JWT.
func signIn(t *testing.T, f *fixture, caller auth.Principal, email, name string) (tokenReply, auth.Principal) {
	t.Helper()
	body, err := json.Marshal(map[string]string{"email": email, "name": name})
	require.NoError(t, err)
	r := tokenCall(t, f, &caller, http.MethodPost, "/internal/v1/authenticate", string(body))
	var p auth.Principal
	if r.code == http.StatusOK {
		require.NoError(t, json.Unmarshal([]byte(r.raw), &p))
	}
	return r, p
}

func TestSignInMapsVerifiedEmailsToUsers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	// A first sign-in: nobody holds the email, so the principal has no id until GET
	// /profile registers the user from it.
	r, first := signIn(t, f, gatewayService, "Grace@Example.com", "Grace Hopper")
	require.Equal(t, http.StatusOK, r.code, r.raw)
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
	assert.Equal(t, auth.Principal{Type: auth.TypeSession, Email: "grace@example.com", Name: "Grace Hopper"}, first)
	code, prof := sendAs(t, f, first, http.MethodGet, "/api/v2/profile", "")
	require.Equal(t, http.StatusOK, code, prof)
	assert.Equal(t, "Grace Hopper", prof["name"])
	assert.Equal(t, "active", prof["status"])
	id := prof["id"].(string)

	// From then on the same email is that user, as a session with their teams.
	code, out := sendAs(t, f, admin, http.MethodPost, "/api/v2/team",
		fmt.Sprintf(`{"name":"infra","members":[{"id":%q,"role":"editor"}]}`, id))
	require.Equal(t, http.StatusCreated, code, out)
	r, again := signIn(t, f, gatewayService, "grace@example.com", "Someone Else")
	require.Equal(t, http.StatusOK, r.code, r.raw)
	assert.Equal(t, auth.Principal{
		Type: auth.TypeSession, ID: id, Name: "Grace Hopper", Email: "grace@example.com",
		Teams: map[string]string{"infra": "editor"}, Person: id,
	}, again)

	// An inactive user is refused, and so is a deleted one.
	code, out = sendAs(t, f, admin, http.MethodPatch, "/api/v2/user/"+id, `{"status":"inactive"}`)
	require.Equal(t, http.StatusNoContent, code, out)
	r, _ = signIn(t, f, gatewayService, "grace@example.com", "")
	require.Equal(t, http.StatusUnauthorized, r.code, r.raw)
	assert.Equal(t, "UNAUTHENTICATED", r.body["reason"])
	gone := signInUser(t, f, "gone@example.com")
	code, out = sendAs(t, f, admin, http.MethodDelete, "/api/v2/user/"+gone.ID, "")
	require.Equal(t, http.StatusNoContent, code, out)
	r, _ = signIn(t, f, gatewayService, "gone@example.com", "")
	require.Equal(t, http.StatusUnauthorized, r.code, r.raw)
}

func TestSignInRequests(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name       string
		caller     auth.Principal
		body       string
		wantStatus int
		wantReason string
	}{
		{"the gateway", gatewayService, `{"email":"a@example.com","name":"A"}`, 200, ""},
		{"no name", gatewayService, `{"email":"a@example.com"}`, 200, ""},
		{"not an address", gatewayService, `{"email":"a at example"}`, 401, "UNAUTHENTICATED"},
		{"a token and an email", gatewayService, `{"token":"btg_x","email":"a@example.com"}`, 400, "REQUEST_INVALID"},
		{"a user may not ask", auth.Principal{Type: auth.TypeSession, ID: "65a1b2c3d4e5f60718293a4b", Roles: []string{"admin"}}, `{"email":"a@example.com"}`, 403, "PERMISSION_DENIED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := tokenCall(t, f, &tt.caller, http.MethodPost, "/internal/v1/authenticate", tt.body)
			require.Equal(t, tt.wantStatus, r.code, r.raw)
			if tt.wantReason != "" {
				assert.Equal(t, tt.wantReason, r.body["reason"])
				return
			}
			assert.Equal(t, "session", r.body["type"])
			assert.Equal(t, "", r.body["id"], "nobody holds the email yet")
		})
	}
}

package standalone_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/authn/oidctest"
)

// TestIntegrationOIDCSignIn signs people in with JWTs of a test OpenID Connect issuer
// through the gateway of a standalone Baton: JWTs that do not verify are refused, a first
// sign-in registers the user through GET /profile, and from then on the JWT acts as that
// user until an admin deactivates them.
func TestIntegrationOIDCSignIn(t *testing.T) {
	t.Parallel()
	issuer := oidctest.New(t, "baton-ui")
	b := start(t, map[string]string{
		"BATON_DATA_DIR":       t.TempDir(),
		"BATON_GATEWAY_ADDR":   "127.0.0.1:0",
		"BATON_LOG_LEVEL":      "error",
		"BATON_RATE_LIMIT":     "0",
		"BATON_AUTH_CACHE_TTL": "300ms",
		"BATON_OIDC_ISSUER":    issuer.URL,
		"BATON_OIDC_AUDIENCE":  "baton-ui",
	})
	var serial atomic.Int64
	jwt := func(email string, edit func(map[string]any)) string {
		c := issuer.Claims(time.Now(), email)
		// RS256 signatures are deterministic: a jti keeps two JWTs of one second apart.
		c["jti"] = fmt.Sprint(serial.Add(1))
		if edit != nil {
			edit(c)
		}
		return issuer.Token(t, c)
	}

	refused := []struct {
		name  string
		token string
	}{
		{"wrong issuer", jwt("ada@example.com", func(c map[string]any) { c["iss"] = "https://login.example.com" })},
		{"wrong audience", jwt("ada@example.com", func(c map[string]any) { c["aud"] = "another-app" })},
		{"expired", jwt("ada@example.com", func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() })},
		{"not yet valid", jwt("ada@example.com", func(c map[string]any) { c["nbf"] = time.Now().Add(time.Hour).Unix() })},
		{"bad signature", func() string {
			parts := strings.Split(jwt("ada@example.com", nil), ".")
			other := strings.Split(jwt("admin@example.com", nil), ".")
			return parts[0] + "." + other[1] + "." + parts[2]
		}()},
		{"alg none", oidctest.Unsigned(t, issuer.SigningKey().ID, issuer.Claims(time.Now(), "ada@example.com"))},
		{"unknown kid", oidctest.Sign(t, oidctest.NewKey(t, "not-published"), jose.RS256, issuer.Claims(time.Now(), "ada@example.com"))},
	}
	for _, tt := range refused {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			code, body := b.call(t, http.MethodGet, "/api/v2/profile", tt.token, "")
			assert.Equal(t, http.StatusUnauthorized, code, body)
			assert.Equal(t, "UNAUTHENTICATED", body["reason"])
		})
	}
	code, page := b.call(t, http.MethodGet, "/api/v2/user/query", b.token, "")
	require.Equal(t, http.StatusOK, code, page)
	assert.EqualValues(t, 0, page["totalElements"], "no refused JWT registered anybody")

	// Grace signs in for the first time: she may only register.
	grace := jwt("Grace@Example.com", nil)
	code, body := b.call(t, http.MethodGet, "/api/v2/features", grace, "")
	require.Equal(t, http.StatusForbidden, code, body)
	code, body = b.call(t, http.MethodPost, "/api/v2/team", grace, `{"name":"grace-team"}`)
	require.Equal(t, http.StatusForbidden, code, body)
	code, prof := b.call(t, http.MethodGet, "/api/v2/profile", grace, "")
	require.Equal(t, http.StatusOK, code, prof)
	assert.Equal(t, "grace@example.com", prof["email"])
	assert.Equal(t, "Name of Grace@Example.com", prof["name"])
	assert.Equal(t, "active", prof["status"])
	assert.Equal(t, "session", prof["principalType"])
	id, _ := prof["id"].(string)
	require.NotEmpty(t, id)

	// From now on the same JWT is her user: she creates a team and owns it.
	code, team := b.call(t, http.MethodPost, "/api/v2/team", grace, `{"name":"grace-team"}`)
	require.Equal(t, http.StatusCreated, code, team)
	code, prof = b.call(t, http.MethodGet, "/api/v2/profile", grace, "")
	require.Equal(t, http.StatusOK, code, prof)
	assert.Equal(t, id, prof["id"])
	teams := prof["teams"].([]any)
	require.Len(t, teams, 1)
	summary := teams[0].(map[string]any)
	assert.Equal(t, "grace-team", summary["name"])
	assert.Equal(t, "grace-team", summary["displayName"])
	assert.Equal(t, "owner", summary["role"])
	// The gateway remembers the principal of a JWT briefly; a new JWT brings her new team.
	code, _ = b.call(t, http.MethodGet, "/api/v2/team/grace-team", jwt("grace@example.com", nil), "")
	assert.Equal(t, http.StatusOK, code)

	// Deactivated, her JWT stops working within the cache's lifetime.
	code, body = b.call(t, http.MethodPatch, "/api/v2/user/"+id, b.token, `{"status":"inactive"}`)
	require.Equal(t, http.StatusNoContent, code, body)
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodGet, "/api/v2/profile", grace, "")
		return code == http.StatusUnauthorized
	}, 10*time.Second, 50*time.Millisecond)
}

package gateway_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway"
	"github.com/baton-flow/baton/gateway/internal/authn/oidctest"
	"github.com/baton-flow/baton/libs/auth"
)

// signInIdentity answers identity's internal sign-in question from a table of emails (an
// email not in it belongs to nobody yet), and every other request as the harness's
// upstreams do.
func signInIdentity(t *testing.T, users map[string]auth.Principal, asked *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/internal/v1/authenticate" {
			_ = json.NewEncoder(w).Encode(map[string]string{"service": "identity", "uri": r.RequestURI})
			return
		}
		asked.Add(1)
		var body struct{ Token, Email, Name string }
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		p, ok := users[body.Email]
		if !ok {
			p = auth.Principal{Type: auth.TypeSession, Email: body.Email, Name: body.Name}
		}
		_ = json.NewEncoder(w).Encode(p)
	}
}

func TestOIDCSignInThroughTheGateway(t *testing.T) {
	t.Parallel()
	issuer := oidctest.New(t, "baton")
	dev := auth.Principal{Type: auth.TypeSession, ID: "u-dev", Email: "dev@example.com", Teams: map[string]string{"infra": "editor"}}
	var asked atomic.Int64
	cfg := gateway.Config{BootstrapToken: testToken, OIDC: gateway.OIDCConfig{Issuer: issuer.URL, Audience: "baton"}}
	h := newHarnessWith(t, cfg, func(h *harness) gateway.Authenticator {
		a, err := gateway.NewAuthenticator(cfg, h.resolver, h.signer, slog.New(slog.NewJSONHandler(h.logs, nil)))
		require.NoError(t, err)
		return a
	})
	identity := startUpstream(t, "identity", signInIdentity(t, map[string]auth.Principal{"dev@example.com": dev}, &asked))
	h.resolver.Set("identity", identity.url)
	token := func(email string, edit func(map[string]any)) string {
		c := issuer.Claims(time.Now(), email)
		if edit != nil {
			edit(c)
		}
		return issuer.Token(t, c)
	}

	t.Run("a registered user acts as their session", func(t *testing.T) {
		const path = "/api/v2/team/infra/workflow/build"
		resp, raw := h.do(t, request{method: "GET", path: path, header: bearer(token("dev@example.com", nil))})
		require.Equal(t, http.StatusOK, resp.StatusCode, "body: %s", raw)
		c := h.upstreams["workflows"].lastCall(t)
		p, err := h.signer.Decode(c.Header.Get(auth.HeaderPrincipal), c.Header.Get(auth.HeaderSignature))
		require.NoError(t, err)
		assert.Equal(t, dev, p)
	})

	t.Run("an unverifiable JWT is refused without asking identity", func(t *testing.T) {
		before := asked.Load()
		wrong := token("dev@example.com", func(c map[string]any) { c["aud"] = "another-app" })
		resp, raw := h.do(t, request{method: "GET", path: "/api/v2/features", header: bearer(wrong)})
		requireError(t, resp, raw, 401, "UNAUTHENTICATED", "/api/v2/features")
		assert.Equal(t, before, asked.Load())
		assert.NotContains(t, h.logs.String(), wrong, "tokens stay out of the logs")
	})

	// Someone signing in for the first time may only register.
	newcomer := token("new@example.com", nil)
	tests := []struct {
		name       string
		method     string
		path       string
		wantStatus int
	}{
		{"GET /profile registers", "GET", "/api/v2/profile", 200},
		{"and its v4 path", "GET", "/api/v2/user/profile", 200},
		{"PATCH /profile", "PATCH", "/api/v2/profile", 403},
		{"features", "GET", "/api/v2/features", 403},
		{"creating a team", "POST", "/api/v2/team", 403},
		{"a team's workflow", "GET", "/api/v2/team/infra/workflow/build", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, raw := h.do(t, request{method: tt.method, path: tt.path, header: bearer(newcomer), body: []byte("{}")})
			require.Equal(t, tt.wantStatus, resp.StatusCode, "body: %s", raw)
			if tt.wantStatus != 200 {
				requireError(t, resp, raw, 403, "PERMISSION_DENIED", tt.path)
				return
			}
			c := identity.lastCall(t)
			for c.RequestURI != "/api/v2/profile" {
				c = identity.lastCall(t) // past the sign-in questions
			}
			p, err := h.signer.Decode(c.Header.Get(auth.HeaderPrincipal), c.Header.Get(auth.HeaderSignature))
			require.NoError(t, err)
			assert.Equal(t, auth.Principal{Type: auth.TypeSession, Email: "new@example.com", Name: "Name of new@example.com"}, p)
		})
	}
}

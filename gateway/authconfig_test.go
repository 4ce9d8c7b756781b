package gateway_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/registry"
)

// TestAuthConfigTellsBrowsersHowToSignIn holds that GET /api/v2/auth/config is open, served
// by the gateway, and says whether OpenID Connect sign-in is on with the issuer, client id,
// scopes and bearer the UI needs; and that the UI's pages may then call the issuer's origin,
// and only it.
func TestAuthConfigTellsBrowsersHowToSignIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		oidc    gateway.OIDCConfig
		want    string
		connect string
	}{
		{name: "off", want: `{}`, connect: "connect-src 'self';"},
		{
			name: "on, the client id is the audience",
			oidc: gateway.OIDCConfig{Issuer: "https://login.example.com/realms/baton", Audience: "baton", EmailClaim: "email"},
			want: `{"oidc":{"issuer":"https://login.example.com/realms/baton","clientId":"baton",` +
				`"scopes":["openid","email","profile"],"bearer":"idToken"}}`,
			connect: "connect-src 'self' https://login.example.com;",
		},
		{
			name: "on, a client of its own and scopes",
			oidc: gateway.OIDCConfig{Issuer: "http://127.0.0.1:5556", Audience: "api://baton", ClientID: "baton-ui",
				Scopes: []string{"openid", "email", "offline_access"}},
			want: `{"oidc":{"issuer":"http://127.0.0.1:5556","clientId":"baton-ui",` +
				`"scopes":["openid","email","offline_access"],"bearer":"accessToken"}}`,
			connect: "connect-src 'self' http://127.0.0.1:5556;",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, gateway.Config{OIDC: tt.oidc})
			// Credentials are not looked at: a wrong one does not turn the answer into a 401.
			for _, header := range []map[string]string{nil, bearer("not-a-token")} {
				resp, raw := h.do(t, request{method: http.MethodGet, path: "/api/v2/auth/config", header: header})
				require.Equal(t, http.StatusOK, resp.StatusCode, "body: %s", raw)
				assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
				assert.JSONEq(t, tt.want, string(raw))
			}

			resp, _ := h.do(t, request{method: http.MethodGet, path: "/signin/callback?code=x&state=y"})
			require.Equal(t, http.StatusOK, resp.StatusCode)
			csp := resp.Header.Get("Content-Security-Policy")
			assert.Contains(t, csp, tt.connect)
			for _, directive := range []string{"default-src 'self';", "script-src 'self';", "frame-ancestors 'none'"} {
				assert.Contains(t, csp, directive, "only connect-src changes")
			}

			for name, u := range h.upstreams {
				assert.Empty(t, u.calls, "%s received a request", name)
			}
		})
	}
}

func TestAuthConfigAnswersOnlyGetAndHead(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{})
	resp, raw := h.do(t, request{method: http.MethodHead, path: "/api/v2/auth/config"})
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, raw)

	resp, raw = h.do(t, request{method: http.MethodPost, path: "/api/v2/auth/config", body: []byte("{}")})
	requireError(t, resp, raw, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "/api/v2/auth/config")
	assert.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
}

func TestConfigFromEnvReadsTheUISignIn(t *testing.T) {
	t.Parallel()
	base := map[string]string{"BATON_OIDC_ISSUER": "https://login.example.com", "BATON_OIDC_AUDIENCE": "api://baton"}
	tests := []struct {
		name       string
		env        map[string]string
		wantClient string
		wantScopes []string
		wantErr    string
	}{
		{name: "defaults: the audience, the default scopes", env: map[string]string{}},
		{name: "a client id", env: map[string]string{"BATON_OIDC_CLIENT_ID": "baton-ui"}, wantClient: "baton-ui"},
		{name: "scopes by spaces or commas, once each", env: map[string]string{"BATON_OIDC_SCOPES": "openid email, groups openid"},
			wantScopes: []string{"openid", "email", "groups"}},
		{name: "scopes without openid", env: map[string]string{"BATON_OIDC_SCOPES": "email profile"}, wantErr: "openid"},
		{name: "a scope with a quote", env: map[string]string{"BATON_OIDC_SCOPES": `openid "email"`}, wantErr: "BATON_OIDC_SCOPES"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range tt.env {
				env[k] = v
			}
			cfg, err := gateway.ConfigFromEnv(func(k string) string { return env[k] })
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantClient, cfg.OIDC.ClientID)
			assert.Equal(t, tt.wantScopes, cfg.OIDC.Scopes)
		})
	}

	t.Run("UI settings without an issuer", func(t *testing.T) {
		t.Parallel()
		for _, k := range []string{"BATON_OIDC_CLIENT_ID", "BATON_OIDC_SCOPES"} {
			_, err := gateway.ConfigFromEnv(func(key string) string {
				if key == k {
					return "openid"
				}
				return ""
			})
			require.ErrorContains(t, err, "BATON_OIDC_ISSUER", k)
		}
	})
}

// A locked installation still tells the browser how to sign in: the sign-in page comes
// before activation's.
func TestAuthConfigAnswersOnALockedInstallation(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("gateway-authconfig-test-key-0123"))
	require.NoError(t, err)
	g, err := gateway.New(gateway.Config{BootstrapToken: "bt-authconfig-test",
		OIDC: gateway.OIDCConfig{Issuer: "https://login.example.com", Audience: "baton"}},
		gateway.Deps{Resolver: registry.NewStatic(nil), Signer: signer, Activation: &lock{}})
	require.NoError(t, err)
	app := httpx.NewApp(httpx.Config{Name: gateway.Name})
	g.Routes(app)

	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/api/v2/auth/config", nil), -1)
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(raw), `"issuer":"https://login.example.com"`)
}

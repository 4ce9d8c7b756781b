package gateway_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway"
	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

// tokens is an authenticator over a fixed table, standing in for identity.
type tokens map[string]auth.Principal

func (m tokens) Authenticate(_ context.Context, credential string) (auth.Principal, error) {
	if p, ok := m[credential]; ok {
		return p, nil
	}
	return auth.Principal{}, apperr.New(apperr.Unauthenticated, "The credential is not valid.")
}

func TestAuthorizationAtTheGateway(t *testing.T) {
	t.Parallel()
	known := tokens{
		"infra-owner":  {Type: auth.TypeTeam, ID: "infra", Team: "infra", TokenID: "t1", Permissions: []string{"**/**"}},
		"infra-reader": {Type: auth.TypeTeam, ID: "infra", Team: "infra", TokenID: "t2", Permissions: []string{"**/read"}},
		"ops-owner":    {Type: auth.TypeTeam, ID: "ops", Team: "ops", TokenID: "t3", Permissions: []string{"**/**"}},
		"build-runner": {Type: auth.TypeWorkflow, ID: "infra/build", Team: "infra", Workflow: "build", TokenID: "t4", Permissions: []string{"workflowrun/write", "workflowrun/read"}},
		"member":       {Type: auth.TypeUser, ID: "u1", Teams: map[string]string{"infra": "editor"}},
	}
	h := newHarnessWith(t, gateway.Config{}, func(*harness) gateway.Authenticator { return known })
	tests := []struct {
		name         string
		method, path string
		token        string
		wantStatus   int
		wantService  string
	}{
		{"team token in its team", "GET", "/api/v2/team/infra/workflow/build", "infra-owner", 200, "workflows"},
		{"team token of another team", "GET", "/api/v2/team/infra/workflow/build", "ops-owner", 403, ""},
		{"another team's schedule", "DELETE", "/api/v2/team/infra/schedule/s1", "ops-owner", 403, ""},
		{"reader reads", "GET", "/api/v2/team/infra/schedule/query", "infra-reader", 200, "schedules"},
		{"reader writes", "POST", "/api/v2/team/infra/schedule", "infra-reader", 403, ""},
		{"reader deletes", "DELETE", "/api/v2/team/infra", "infra-reader", 403, ""},
		{"reader moves a run", "PUT", "/api/v2/team/infra/workflowrun/r1/retry", "infra-reader", 403, ""},
		{"team token instance-wide", "PUT", "/api/v2/settings", "infra-owner", 403, ""},
		{"workflow token submits its workflow", "POST", "/api/v2/team/infra/workflow/build/submit", "build-runner", 200, "runs"},
		{"workflow token submits another", "POST", "/api/v2/team/infra/workflow/deploy/submit", "build-runner", 403, ""},
		{"workflow token reads a run; runs checks whose", "GET", "/api/v2/team/infra/workflowrun/r1", "build-runner", 200, "runs"},
		{"workflow token reads the workflow list", "GET", "/api/v2/team/infra/workflow/query", "build-runner", 403, ""},
		{"editor writes", "PUT", "/api/v2/team/infra/workflow", "member", 200, "workflows"},
		{"editor cannot delete", "DELETE", "/api/v2/team/infra/workflow/build", "member", 403, ""},
		{"the service decides on tokens", "POST", "/api/v2/token", "infra-reader", 200, "identity"},
		{"anyone signed in reads features", "GET", "/api/v2/features", "build-runner", 200, "identity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			if tt.method != "GET" && tt.method != "DELETE" {
				body = []byte(`{}`)
			}
			resp, raw := h.do(t, request{method: tt.method, path: tt.path, header: bearer(tt.token), body: body})
			if tt.wantStatus == http.StatusForbidden {
				e := requireError(t, resp, raw, 403, "PERMISSION_DENIED", tt.path)
				assert.Contains(t, e.Message, "Not allowed")
				return
			}
			require.Equal(t, tt.wantStatus, resp.StatusCode, "body: %s", raw)
			var got map[string]string
			require.NoError(t, json.Unmarshal(raw, &got))
			assert.Equal(t, tt.wantService, got["service"])
			c := h.upstreams[tt.wantService].lastCall(t)
			p, err := h.signer.Decode(c.Header.Get(auth.HeaderPrincipal), c.Header.Get(auth.HeaderSignature))
			require.NoError(t, err)
			assert.Equal(t, known[tt.token], p)
		})
	}
	// Nothing refused reached a service.
	for _, name := range services {
		select {
		case c := <-h.upstreams[name].calls:
			t.Errorf("%s got %s %s", name, c.Method, c.RequestURI)
		default:
		}
	}
}

// fakeIdentity answers identity's internal authentication endpoint from a table it lets
// tests change (revoking a token), and every other request as the harness's upstreams do.
type fakeIdentity struct {
	mu     sync.Mutex
	tokens map[string]auth.Principal
	asked  int
}

func (f *fakeIdentity) set(token string, p *auth.Principal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p == nil {
		delete(f.tokens, token)
		return
	}
	f.tokens[token] = *p
}

func (f *fakeIdentity) handler(t *testing.T, signer *auth.Signer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/internal/v1/authenticate" {
			_ = json.NewEncoder(w).Encode(map[string]string{"service": "identity", "uri": r.RequestURI})
			return
		}
		caller, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		if err != nil || caller.Type != auth.TypeService {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		var body struct{ Token string }
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		f.mu.Lock()
		p, ok := f.tokens[body.Token]
		f.asked++
		f.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"status":401,"reason":"UNAUTHENTICATED"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(p)
	}
}

func TestAuthenticationThroughIdentity(t *testing.T) {
	t.Parallel()
	team := auth.Principal{Type: auth.TypeTeam, ID: "infra", Team: "infra", TokenID: "t1", Permissions: []string{"**/read"}}
	id := &fakeIdentity{tokens: map[string]auth.Principal{"btt_team": team}}
	h := newHarnessWith(t, gateway.Config{AuthCacheTTL: 200 * time.Millisecond}, func(h *harness) gateway.Authenticator {
		logger := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		a, err := gateway.NewAuthenticator(gateway.Config{BootstrapToken: testToken, AuthCacheTTL: 200 * time.Millisecond}, h.resolver, h.signer, logger)
		require.NoError(t, err)
		return a
	})
	h.resolver.Set("identity", startUpstream(t, "identity", id.handler(t, h.signer)).url)
	const path = "/api/v2/team/infra/workflow/build"

	resp, raw := h.do(t, request{method: "GET", path: path, header: bearer("btt_team")})
	require.Equal(t, http.StatusOK, resp.StatusCode, "body: %s", raw)
	c := h.upstreams["workflows"].lastCall(t)
	p, err := h.signer.Decode(c.Header.Get(auth.HeaderPrincipal), c.Header.Get(auth.HeaderSignature))
	require.NoError(t, err)
	assert.Equal(t, team, p)

	t.Run("bootstrap token still works, without asking identity", func(t *testing.T) {
		id.mu.Lock()
		before := id.asked
		id.mu.Unlock()
		resp, raw := h.do(t, request{method: "GET", path: path, header: bearer(testToken)})
		require.Equal(t, http.StatusOK, resp.StatusCode, "body: %s", raw)
		h.upstreams["workflows"].lastCall(t)
		id.mu.Lock()
		defer id.mu.Unlock()
		assert.Equal(t, before, id.asked)
	})

	t.Run("unknown token", func(t *testing.T) {
		resp, raw := h.do(t, request{method: "GET", path: path, header: map[string]string{"x-access-token": "btt_nope"}})
		requireError(t, resp, raw, 401, "UNAUTHENTICATED", path)
	})

	t.Run("a revoked token stops working within the cache TTL", func(t *testing.T) {
		id.set("btt_team", nil)
		require.Eventually(t, func() bool {
			resp, _ := h.do(t, request{method: "GET", path: path, header: bearer("btt_team")})
			return resp.StatusCode == http.StatusUnauthorized
		}, 5*time.Second, 20*time.Millisecond)
		// Answers that came before the revocation were served from the cache.
		for range len(h.upstreams["workflows"].calls) {
			<-h.upstreams["workflows"].calls
		}
	})

	t.Run("identity down is 503, not 401", func(t *testing.T) {
		h.resolver.Set("identity", closedPortURL(t))
		for _, token := range []string{"btt_other", "btt_another"} {
			resp, raw := h.do(t, request{method: "GET", path: path, header: bearer(token)})
			e := requireError(t, resp, raw, 503, "DEPENDENCY_UNAVAILABLE", path)
			assert.Contains(t, e.Message, "identity")
			assert.NotEmpty(t, resp.Header.Get("Retry-After"))
			assert.NotContains(t, string(raw), token)
		}
		assert.NotContains(t, h.logs.String(), "btt_other", "credentials stay out of the logs")
		// The bootstrap token does not need identity.
		resp, raw := h.do(t, request{method: "GET", path: path, header: bearer(testToken)})
		require.Equal(t, http.StatusOK, resp.StatusCode, "body: %s", raw)
	})
}

func TestBuildAuthenticatesThroughIdentity(t *testing.T) {
	t.Parallel()
	// NewAuthenticator is what Build wires; a principal without a type is refused as
	// identity misbehaving rather than trusted.
	id := &fakeIdentity{tokens: map[string]auth.Principal{"btt_bad": {}}}
	h := newHarnessWith(t, gateway.Config{}, func(h *harness) gateway.Authenticator {
		a, err := gateway.NewAuthenticator(gateway.Config{BootstrapToken: testToken}, h.resolver, h.signer, slog.New(slog.NewJSONHandler(h.logs, nil)))
		require.NoError(t, err)
		return a
	})
	h.resolver.Set("identity", startUpstream(t, "identity", id.handler(t, h.signer)).url)
	resp, raw := h.do(t, request{method: "GET", path: "/api/v2/features", header: bearer("btt_bad")})
	requireError(t, resp, raw, 503, "DEPENDENCY_UNAVAILABLE", "/api/v2/features")
	assert.False(t, strings.Contains(string(raw), "btt_bad"))
}

// A run's callback token, as Build wires the authenticator: the service key verifies it
// without asking identity; it acts as its run on the callbacks, in a header or the query,
// and is refused everywhere else, including routes the gateway leaves to their service.
func TestRunTokensAnswerOnlyCallbacks(t *testing.T) {
	t.Parallel()
	id := &fakeIdentity{tokens: map[string]auth.Principal{}}
	h := newHarnessWith(t, gateway.Config{}, func(h *harness) gateway.Authenticator {
		a, err := gateway.NewAuthenticator(gateway.Config{BootstrapToken: testToken}, h.resolver, h.signer, slog.New(slog.NewJSONHandler(h.logs, nil)))
		require.NoError(t, err)
		return a
	})
	h.resolver.Set("identity", startUpstream(t, "identity", id.handler(t, h.signer)).url)
	const runID = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
	token := h.signer.RunToken(runID)
	forged := "btr_" + runID + "." + strings.Repeat("A", 43)
	other, err := auth.NewSigner([]byte("not-the-gateways-service-key"))
	require.NoError(t, err)
	callback := "/api/v2/callback?ref=" + runID + "&topic=deployed&status=Succeeded"
	tests := []struct {
		name         string
		method, path string
		header       map[string]string
		wantStatus   int
		wantReason   string
	}{
		{"a callback by POST", "POST", callback, bearer(token), 200, ""},
		{"a callback by GET", "GET", callback, bearer(token), 200, ""},
		{"a callback with the token in the query", "GET", callback + "&access_token=" + token, nil, 200, ""},
		{"a callback with the token in x-access-token", "POST", callback, map[string]string{"x-access-token": token}, 200, ""},
		{"a route the gateway checks", "GET", "/api/v2/team/x/workflowrun/query", bearer(token), 403, "PERMISSION_DENIED"},
		{"a route its service decides", "POST", "/api/v2/token", bearer(token), 403, "PERMISSION_DENIED"},
		{"a route anyone signed in may call", "GET", "/api/v2/features", bearer(token), 403, "PERMISSION_DENIED"},
		{"a forged token", "POST", callback, bearer(forged), 401, "UNAUTHENTICATED"},
		{"a forged token in the query", "GET", callback + "&access_token=" + forged, nil, 401, "UNAUTHENTICATED"},
		{"a token signed with another key", "POST", callback, bearer(other.RunToken(runID)), 401, "UNAUTHENTICATED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			if tt.method == "POST" {
				body = []byte(`{}`)
			}
			resp, raw := h.do(t, request{method: tt.method, path: tt.path, header: tt.header, body: body})
			if tt.wantStatus != http.StatusOK {
				requireError(t, resp, raw, tt.wantStatus, tt.wantReason, strings.SplitN(tt.path, "?", 2)[0])
				return
			}
			require.Equal(t, http.StatusOK, resp.StatusCode, "body: %s", raw)
			c := h.upstreams["runs"].lastCall(t)
			assert.Equal(t, tt.method, c.Method)
			p, err := h.signer.Decode(c.Header.Get(auth.HeaderPrincipal), c.Header.Get(auth.HeaderSignature))
			require.NoError(t, err)
			assert.Equal(t, auth.Principal{Type: auth.TypeRun, ID: runID, Name: "callback token"}, p)
		})
	}
	// Nothing refused reached a service, and identity was never asked about run tokens.
	for _, name := range services {
		select {
		case c := <-h.upstreams[name].calls:
			t.Errorf("%s got %s %s", name, c.Method, c.RequestURI)
		default:
		}
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	assert.Zero(t, id.asked, "identity is not asked about run tokens")
	assert.NotContains(t, h.logs.String(), token[strings.LastIndexByte(token, '.')+1:], "credentials stay out of the logs")
}

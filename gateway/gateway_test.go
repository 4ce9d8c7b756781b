package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/testkit"
)

func TestRoutesToTheOwningService(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{})
	tests := []struct {
		name        string
		method      string
		path        string
		wantService string
		wantMethod  string
		wantURI     string
	}{
		{"team", "GET", "/api/v2/team/infra", "identity", "GET", "/api/v2/team/infra"},
		{"team search beats team name", "GET", "/api/v2/team/query?limit=10&page=0", "identity", "GET", "/api/v2/team/query?limit=10&page=0"},
		{"workflow", "GET", "/api/v2/team/infra/workflow/build?version=2", "workflows", "GET", "/api/v2/team/infra/workflow/build?version=2"},
		{"submit", "POST", "/api/v2/team/infra/workflow/build/submit?start=true", "runs", "POST", "/api/v2/team/infra/workflow/build/submit?start=true"},
		{"run", "PUT", "/api/v2/team/infra/workflowrun/65a1b2c3d4e5f60718293a4b/retry", "runs", "PUT", "/api/v2/team/infra/workflowrun/65a1b2c3d4e5f60718293a4b/retry"},
		{"task", "DELETE", "/api/v2/team/infra/task/echo", "tasks", "DELETE", "/api/v2/team/infra/task/echo"},
		{"global task", "GET", "/api/v2/task/query?limit=5&page=0", "tasks", "GET", "/api/v2/task/query?limit=5&page=0"},
		{"schedule", "GET", "/api/v2/team/infra/schedule/validate-cron?cron=*%2F5+*+*+*+*", "schedules", "GET", "/api/v2/team/infra/schedule/validate-cron?cron=*%2F5+*+*+*+*"},
		{"template", "GET", "/api/v2/workflowtemplate/deploy", "workflows", "GET", "/api/v2/workflowtemplate/deploy"},
		{"integration", "GET", "/api/v2/integration?team=infra", "integrations", "GET", "/api/v2/integration?team=infra"},
		{"encoded segment passes unchanged", "GET", "/api/v2/team/infra/workflow/a%2Fb", "workflows", "GET", "/api/v2/team/infra/workflow/a%2Fb"},
		{"labels pass encoded", "GET", "/api/v2/team/infra/workflowrun/count?labels=a%3Db,c%3Dd", "runs", "GET", "/api/v2/team/infra/workflowrun/count?labels=a%3Db,c%3Dd"},
		// Compatibility paths.
		{"user profile", "GET", "/api/v2/user/profile", "identity", "GET", "/api/v2/profile"},
		{"user profile patch", "PATCH", "/api/v2/user/profile", "identity", "PATCH", "/api/v2/profile"},
		{"global params", "GET", "/api/v2/global-params", "identity", "GET", "/api/v2/parameters"},
		{"global params patch as put", "PATCH", "/api/v2/global-params/region", "identity", "PUT", "/api/v2/parameters"},
		{"global params delete", "DELETE", "/api/v2/global-params/region", "identity", "DELETE", "/api/v2/parameters/region"},
		{"export outside a team", "GET", "/api/v2/workflow/build/export", "workflows", "GET", "/api/v2/workflow/build/export"},
		{"cron outside a team", "GET", "/api/v2/schedule/validate-cron?cron=@hourly", "schedules", "GET", "/api/v2/schedule/validate-cron?cron=@hourly"},
		{"github link", "POST", "/api/v2/integration/github/link", "integrations", "POST", "/api/v2/integration/codehost/link"},
		{"github installation", "GET", "/api/v2/integration/github/installation?id=7&team=infra", "integrations", "GET", "/api/v2/integration/codehost/installation?id=7&team=infra"},
		{"approver group", "DELETE", "/api/v2/team/infra/approvers/g1", "identity", "DELETE", "/api/v2/team/infra/approvers/g1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One upstream per service records the calls, so these run one at a time.
			var body []byte
			if tt.method == "POST" || tt.method == "PUT" || tt.method == "PATCH" {
				body = []byte(`{"name":"x"}`)
			}
			resp, raw := h.do(t, request{method: tt.method, path: tt.path, header: bearer(testToken), body: body})
			require.Equal(t, http.StatusOK, resp.StatusCode, "body: %s", raw)
			var got map[string]string
			require.NoError(t, json.Unmarshal(raw, &got))
			assert.Equal(t, tt.wantService, got["service"])

			c := h.upstreams[tt.wantService].lastCall(t)
			assert.Equal(t, tt.wantMethod, c.Method)
			assert.Equal(t, tt.wantURI, c.RequestURI)
			assert.Equal(t, string(body), string(c.Body))
		})
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{})
	tests := []struct {
		name          string
		method, path  string
		header        map[string]string
		wantStatus    int
		wantPrincipal bool
	}{
		{name: "no credential", method: "GET", path: "/api/v2/team/infra", wantStatus: 401},
		{name: "wrong bearer", method: "GET", path: "/api/v2/team/infra", header: bearer("bt-guess"), wantStatus: 401},
		{name: "not a bearer scheme", method: "GET", path: "/api/v2/team/infra", header: map[string]string{"Authorization": "Basic " + testToken}, wantStatus: 401},
		{name: "bearer", method: "GET", path: "/api/v2/team/infra", header: bearer(testToken), wantStatus: 200, wantPrincipal: true},
		{name: "x-access-token", method: "GET", path: "/api/v2/team/infra", header: map[string]string{"x-access-token": testToken}, wantStatus: 200, wantPrincipal: true},
		{name: "query token where allowed", method: "GET", path: "/api/v2/callback?ref=r1&topic=t&access_token=" + testToken, wantStatus: 200, wantPrincipal: true},
		{name: "query token elsewhere", method: "GET", path: "/api/v2/team/infra?access_token=" + testToken, wantStatus: 401},
		{name: "open route without credential", method: "POST", path: "/api/v2/integration/chat/events", wantStatus: 200},
		{name: "open route with a wrong credential", method: "POST", path: "/api/v2/integration/chat/events", header: bearer("bt-guess"), wantStatus: 401},
		{name: "webhook with its query token", method: "POST", path: "/api/v2/webhook?ref=infra/build&access_token=" + testToken, wantStatus: 200, wantPrincipal: true},
		{name: "webhook from a code host", method: "POST", path: "/api/v2/webhook", header: map[string]string{"X-Host-Event": "push"}, wantStatus: 200},
		{name: "webhook with a wrong query token", method: "POST", path: "/api/v2/webhook?access_token=bt-guess", wantStatus: 401},
		{name: "activation", method: "PUT", path: "/api/v2/activate", wantStatus: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, raw := h.do(t, request{method: tt.method, path: tt.path, header: tt.header, body: []byte(`{}`)})
			if tt.wantStatus == http.StatusUnauthorized {
				requireError(t, resp, raw, 401, "UNAUTHENTICATED", strings.Split(tt.path, "?")[0])
				return
			}
			require.Equal(t, tt.wantStatus, resp.StatusCode, "body: %s", raw)
			var got map[string]string
			require.NoError(t, json.Unmarshal(raw, &got))
			c := h.upstreams[got["service"]].lastCall(t)
			p, err := h.signer.Decode(c.Header.Get(auth.HeaderPrincipal), c.Header.Get(auth.HeaderSignature))
			require.NoError(t, err)
			if !tt.wantPrincipal {
				assert.Equal(t, auth.Anonymous, p, "open routes without credentials carry the anonymous principal")
				return
			}
			assert.Equal(t, auth.Principal{Type: "global", ID: "bootstrap", Name: "bootstrap admin", Roles: []string{"admin"}}, p)
		})
	}
}

func TestClientPrincipalHeadersNeverReachServices(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{})
	// Even a correctly signed principal (a leaked header pair) must not pass through.
	forged, sig, err := h.signer.Encode(auth.Principal{Type: "user", ID: "mallory", Roles: []string{"admin"}})
	require.NoError(t, err)
	tests := []struct {
		name          string
		method, path  string
		credential    bool
		wantPrincipal string
	}{
		{name: "authenticated", method: "GET", path: "/api/v2/features", credential: true, wantPrincipal: "bootstrap"},
		{name: "open", method: "GET", path: "/api/v2/integration/chat/install", wantPrincipal: "anonymous"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := map[string]string{auth.HeaderPrincipal: forged, auth.HeaderSignature: sig}
			if tt.credential {
				header["Authorization"] = "Bearer " + testToken
			}
			resp, raw := h.do(t, request{method: tt.method, path: tt.path, header: header})
			require.Equal(t, http.StatusOK, resp.StatusCode, "body: %s", raw)
			var got map[string]string
			require.NoError(t, json.Unmarshal(raw, &got))
			c := h.upstreams[got["service"]].lastCall(t)
			require.Len(t, c.Header.Values(auth.HeaderPrincipal), 1)
			p, err := h.signer.Decode(c.Header.Get(auth.HeaderPrincipal), c.Header.Get(auth.HeaderSignature))
			require.NoError(t, err)
			assert.Equal(t, tt.wantPrincipal, p.ID)
		})
	}
}

func TestForwardedHeaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	resp, raw := h.do(t, request{method: "GET", path: "/api/v2/features", header: map[string]string{
		"Authorization":       "Bearer " + testToken,
		"X-Request-ID":        "req-123",
		"X-Forwarded-For":     "203.0.113.7",
		"Host":                "baton.example.com",
		"traceparent":         "00-" + traceID + "-00f067aa0ba902b7-01",
		"Connection":          "X-Hop",
		"X-Hop":               "drop me",
		"Proxy-Authorization": "Basic abc",
		"X-Custom":            "keep me",
	}})
	require.Equal(t, http.StatusOK, resp.StatusCode, "body: %s", raw)
	assert.Equal(t, []string{"req-123"}, resp.Header.Values("X-Request-ID"))

	c := h.upstreams["identity"].lastCall(t)
	assert.Equal(t, "req-123", c.Header.Get("X-Request-ID"))
	assert.Equal(t, "203.0.113.7, 127.0.0.1", c.Header.Get("X-Forwarded-For"))
	assert.Equal(t, "http", c.Header.Get("X-Forwarded-Proto"))
	assert.Equal(t, "baton.example.com", c.Header.Get("X-Forwarded-Host"))
	assert.Equal(t, "keep me", c.Header.Get("X-Custom"))
	assert.Equal(t, testToken, strings.TrimPrefix(c.Header.Get("Authorization"), "Bearer "), "services may need the caller's token")
	assert.Empty(t, c.Header.Get("X-Hop"))
	assert.Empty(t, c.Header.Get("Proxy-Authorization"))

	// The gateway's span continues the caller's trace and is the parent upstream.
	parts := strings.Split(c.Header.Get("traceparent"), "-")
	require.Len(t, parts, 4, "traceparent %q", c.Header.Get("traceparent"))
	assert.Equal(t, traceID, parts[1])
	assert.NotEqual(t, "00f067aa0ba902b7", parts[2])

	t.Run("generated request ID", func(t *testing.T) {
		resp, _ := h.do(t, request{method: "GET", path: "/api/v2/features", header: bearer(testToken)})
		require.Equal(t, http.StatusOK, resp.StatusCode)
		id := resp.Header.Get("X-Request-ID")
		require.NotEmpty(t, id)
		assert.Equal(t, id, h.upstreams["identity"].lastCall(t).Header.Get("X-Request-ID"))
	})
}

func TestUpstreamResponsePassesThrough(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{})
	created := startUpstream(t, "workflows", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/api/v2/team/infra/workflow/build")
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.Header().Set("X-Request-ID", r.Header.Get("X-Request-ID"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"name":"build"}`)
	})
	h.resolver.Set("workflows", created.url)

	resp, raw := h.do(t, request{method: "POST", path: "/api/v2/team/infra/workflow", header: bearer(testToken), body: []byte(`{"name":"build"}`)})
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, `{"name":"build"}`, string(raw))
	assert.Equal(t, "/api/v2/team/infra/workflow/build", resp.Header.Get("Location"))
	assert.ElementsMatch(t, []string{"a=1", "b=2"}, resp.Header.Values("Set-Cookie"))
	assert.Len(t, resp.Header.Values("X-Request-ID"), 1)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
}

func TestUpstreamFailures(t *testing.T) {
	t.Parallel()
	closed := closedPortURL(t)
	tests := []struct {
		name       string
		instances  []string
		wantStatus int
		wantReason string
	}{
		{name: "connection refused", instances: []string{closed}, wantStatus: 502, wantReason: "UPSTREAM_UNREACHABLE"},
		{name: "no healthy instance", instances: nil, wantStatus: 503, wantReason: "UPSTREAM_UNAVAILABLE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, gateway.Config{})
			h.resolver.Set("runs", tt.instances...)
			resp, raw := h.do(t, request{method: "GET", path: "/api/v2/team/infra/workflowrun/count", header: bearer(testToken)})
			e := requireError(t, resp, raw, tt.wantStatus, tt.wantReason, "/api/v2/team/infra/workflowrun/count")
			assert.Contains(t, e.Message, "runs")
			assert.NotEmpty(t, e.TraceID)
		})
	}

	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, gateway.Config{UpstreamTimeout: 200 * time.Millisecond})
		release := make(chan struct{})
		blocked := startUpstream(t, "runs", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		t.Cleanup(func() { close(release) })
		h.resolver.Set("runs", blocked.url)

		start := time.Now()
		resp, raw := h.do(t, request{method: "GET", path: "/api/v2/team/infra/insights", header: bearer(testToken)})
		requireError(t, resp, raw, 504, "UPSTREAM_TIMEOUT", "/api/v2/team/infra/insights")
		assert.Less(t, time.Since(start), 5*time.Second)
		assert.Len(t, blocked.calls, 1, "a timed-out request is not repeated")
	})
}

func TestRetriesAnotherInstance(t *testing.T) {
	t.Parallel()
	hangup := func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}
	tests := []struct {
		name       string
		method     string
		healthy    bool // the second instance answers; else it hangs up too
		dead       bool // the first instance refuses connections; else it hangs up
		wantStatus int
		wantCalls  int // requests the hanging-up instances received
	}{
		{name: "refused get moves on", method: "GET", healthy: true, dead: true, wantStatus: 200},
		{name: "refused post moves on: it was never sent", method: "POST", healthy: true, dead: true, wantStatus: 200},
		{name: "hung-up put moves on", method: "PUT", healthy: true, wantStatus: 200, wantCalls: 2},
		{name: "hung-up post is not repeated elsewhere", method: "POST", wantStatus: 502, wantCalls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, gateway.Config{})
			first := closedPortURL(t)
			var hungUp []*upstream
			if !tt.dead {
				u := startUpstream(t, "schedules", hangup)
				hungUp = append(hungUp, u)
				first = u.url
			}
			second := h.upstreams["schedules"]
			if !tt.healthy {
				second = startUpstream(t, "schedules", hangup)
				hungUp = append(hungUp, second)
			}
			h.resolver.Set("schedules", first, second.url)

			path, body := "/api/v2/team/infra/schedule", []byte(`{}`)
			if tt.method == "GET" {
				path, body = "/api/v2/team/infra/schedule/query", nil
			}
			// Round robin starts anywhere, so send enough requests to start at each instance.
			for range 2 {
				resp, raw := h.do(t, request{method: tt.method, path: path, header: bearer(testToken), body: body})
				require.Equal(t, tt.wantStatus, resp.StatusCode, "body: %s", raw)
			}
			calls := 0
			for _, u := range hungUp {
				calls += len(u.calls)
				if tt.method == "POST" && len(u.calls) > 0 {
					// Each POST reached one instance only: the transport's single same-instance
					// attempt for a dropped keep-alive connection, never a second instance.
					assert.Len(t, u.calls, tt.wantCalls)
				}
			}
			if tt.method != "POST" {
				assert.Equal(t, tt.wantCalls, calls)
			}
		})
	}
}

func TestBodyLimits(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{})
	tests := []struct {
		name       string
		method     string
		path       string
		size       int
		wantStatus int
	}{
		{"task at the limit", "POST", "/api/v2/team/infra/task", httpx.DefaultBodyLimit, 200},
		{"task over the limit", "POST", "/api/v2/team/infra/task", httpx.DefaultBodyLimit + 1, 413},
		{"submit over the limit", "POST", "/api/v2/team/infra/workflow/build/submit", httpx.DefaultBodyLimit + 1, 413},
		{"workflow over the default limit", "POST", "/api/v2/team/infra/workflow", 2 * httpx.DefaultBodyLimit, 200},
		{"canvas at the large limit", "PUT", "/api/v2/team/infra/workflow/build/compose", httpx.LargeBodyLimit, 200},
		{"template over the default limit", "PUT", "/api/v2/workflowtemplate", 2 * httpx.DefaultBodyLimit, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := bytes.Repeat([]byte("x"), tt.size)
			resp, raw := h.do(t, request{method: tt.method, path: tt.path, header: bearer(testToken), body: body})
			if tt.wantStatus == 413 {
				requireError(t, resp, raw, 413, "REQUEST_TOO_LARGE", tt.path)
				return
			}
			require.Equal(t, tt.wantStatus, resp.StatusCode, "body: %s", raw)
			var got map[string]string
			require.NoError(t, json.Unmarshal(raw, &got))
			assert.Len(t, h.upstreams[got["service"]].lastCall(t).Body, tt.size)
		})
	}
	for _, name := range services {
		assert.Empty(t, h.upstreams[name].calls, "%s got a request that was too large", name)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{RateLimit: 0.5, RateBurst: 2})
	get := func(header map[string]string) (*http.Response, []byte) {
		return h.do(t, request{method: "GET", path: "/api/v2/features", header: header})
	}
	for i := range 2 {
		resp, raw := get(bearer(testToken))
		require.Equal(t, http.StatusOK, resp.StatusCode, "request %d: %s", i, raw)
	}
	resp, raw := get(bearer(testToken))
	requireError(t, resp, raw, 429, "RATE_LIMITED", "/api/v2/features")
	after, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q", resp.Header.Get("Retry-After"))
	assert.InDelta(t, 2, after, 1)

	// A client without credentials has its own bucket, by address.
	resp, raw = h.do(t, request{method: "GET", path: "/api/v2/integration/chat/install"})
	assert.Equal(t, http.StatusOK, resp.StatusCode, "body: %s", raw)
}

func TestFailedAuthenticationIsRateLimitedByAddress(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{RateLimit: 0.5, RateBurst: 2})
	for i := range 2 {
		resp, raw := h.do(t, request{method: "GET", path: "/api/v2/features", header: bearer(fmt.Sprintf("bt-guess-%d", i))})
		requireError(t, resp, raw, 401, "UNAUTHENTICATED", "/api/v2/features")
	}
	resp, raw := h.do(t, request{method: "GET", path: "/api/v2/features", header: bearer("bt-guess-3")})
	requireError(t, resp, raw, 429, "RATE_LIMITED", "/api/v2/features")
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))

	// The valid token has its own bucket.
	resp, raw = h.do(t, request{method: "GET", path: "/api/v2/features", header: bearer(testToken)})
	assert.Equal(t, http.StatusOK, resp.StatusCode, "body: %s", raw)
}

func TestRateLimitOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{RateLimit: -1, RateBurst: 1})
	for i := range 5 {
		resp, raw := h.do(t, request{method: "GET", path: "/api/v2/features", header: bearer(testToken)})
		require.Equal(t, http.StatusOK, resp.StatusCode, "request %d: %s", i, raw)
	}
}

func TestUnknownRoutes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{})
	tests := []struct {
		name         string
		method, path string
		wantStatus   int
		wantReason   string
		wantAllow    string
	}{
		{name: "unknown path", method: "GET", path: "/api/v2/nope", wantStatus: 404, wantReason: "ROUTE_NOT_FOUND"},
		{name: "the prefix itself", method: "GET", path: "/api/v2", wantStatus: 404, wantReason: "ROUTE_NOT_FOUND"},
		{name: "another api", method: "GET", path: "/api/nope", wantStatus: 404, wantReason: "ROUTE_NOT_FOUND"},
		{name: "only the YAML document is served", method: "GET", path: "/api/v2/openapi.json", wantStatus: 404, wantReason: "ROUTE_NOT_FOUND"},
		{name: "wrong method", method: "PUT", path: "/api/v2/team/infra", wantStatus: 405, wantReason: "METHOD_NOT_ALLOWED", wantAllow: "GET, HEAD, PATCH, DELETE"},
		{name: "no global task delete", method: "DELETE", path: "/api/v2/task/echo", wantStatus: 405, wantReason: "METHOD_NOT_ALLOWED", wantAllow: "GET, HEAD, PUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No credentials: routing answers before authentication.
			resp, raw := h.do(t, request{method: tt.method, path: tt.path})
			requireError(t, resp, raw, tt.wantStatus, tt.wantReason, tt.path)
			assert.Equal(t, tt.wantAllow, resp.Header.Get("Allow"))
		})
	}
}

func TestFollowedLogStreams(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{UpstreamTimeout: 200 * time.Millisecond})
	release := make(chan struct{})
	logs := startUpstream(t, "runs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "line 1\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
			_, _ = io.WriteString(w, "line 2\n")
		case <-r.Context().Done():
		}
	})
	h.resolver.Set("runs", logs.url)

	req, err := http.NewRequest("GET", h.base+"/api/v2/taskrun/65a1b2c3d4e5f60718293a4b/log?follow=true", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := h.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/plain", resp.Header.Get("Content-Type"))

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// The first line arrives while the upstream is still writing: the body is streamed.
	assert.Equal(t, "line 1", <-lines)
	// A follow outlives the upstream timeout.
	assert.Never(t, func() bool {
		select {
		case <-lines:
			return true
		default:
			return false
		}
	}, 600*time.Millisecond, 20*time.Millisecond, "the stream ended early")
	close(release)
	assert.Equal(t, "line 2", <-lines)
	_, open := <-lines
	assert.False(t, open)
}

func TestAccessTokenNeverLogged(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{})
	h.resolver.Set("runs", closedPortURL(t))
	h.resolver.Set("integrations")
	tests := []struct {
		method, path string
		wantStatus   int
	}{
		{"POST", "/api/v2/callback?ref=r1&topic=t&access_token=" + testToken, 502},
		{"POST", "/api/v2/event?access_token=" + testToken, 503},
	}
	for _, tt := range tests {
		resp, raw := h.do(t, request{method: tt.method, path: tt.path, body: []byte(`{}`)})
		require.Equal(t, tt.wantStatus, resp.StatusCode, "body: %s", raw)
	}
	logs := h.logs.String()
	assert.Contains(t, logs, "access_token=********", "the failure was logged")
	assert.NotContains(t, logs, testToken)
}

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	defaults := gateway.Config{RateLimit: 50, RateBurst: 100, UpstreamTimeout: 30 * time.Second, AuthCacheTTL: 5 * time.Second, AuthCacheSize: 10000}
	with := func(f func(*gateway.Config)) gateway.Config {
		c := defaults
		f(&c)
		return c
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    gateway.Config
		wantErr string
	}{
		{name: "defaults", want: defaults},
		{name: "everything set", env: map[string]string{
			"BATON_GATEWAY_ADDR": "0.0.0.0:9090", "BATON_RATE_LIMIT": "7.5", "BATON_RATE_BURST": "15",
			"BATON_UPSTREAM_TIMEOUT": "2m", "BATON_BOOTSTRAP_TOKEN": "tok", "BATON_AUTH_CACHE_TTL": "250ms",
			"BATON_AUTH_CACHE_SIZE": "50",
		}, want: gateway.Config{Addr: "0.0.0.0:9090", RateLimit: 7.5, RateBurst: 15, UpstreamTimeout: 2 * time.Minute,
			BootstrapToken: "tok", AuthCacheTTL: 250 * time.Millisecond, AuthCacheSize: 50}},
		{name: "rate limit off", env: map[string]string{"BATON_RATE_LIMIT": "0"},
			want: with(func(c *gateway.Config) { c.RateLimit = -1 })},
		{name: "auth cache off", env: map[string]string{"BATON_AUTH_CACHE_TTL": "0"},
			want: with(func(c *gateway.Config) { c.AuthCacheTTL = -1 })},
		{name: "bad rate", env: map[string]string{"BATON_RATE_LIMIT": "fast"}, wantErr: "BATON_RATE_LIMIT"},
		{name: "infinite rate", env: map[string]string{"BATON_RATE_LIMIT": "Inf"}, wantErr: "BATON_RATE_LIMIT"},
		{name: "zero burst", env: map[string]string{"BATON_RATE_BURST": "0"}, wantErr: "BATON_RATE_BURST"},
		{name: "timeout without unit", env: map[string]string{"BATON_UPSTREAM_TIMEOUT": "30"}, wantErr: "BATON_UPSTREAM_TIMEOUT"},
		{name: "negative timeout", env: map[string]string{"BATON_UPSTREAM_TIMEOUT": "-1s"}, wantErr: "BATON_UPSTREAM_TIMEOUT"},
		{name: "auth cache ttl without unit", env: map[string]string{"BATON_AUTH_CACHE_TTL": "5"}, wantErr: "BATON_AUTH_CACHE_TTL"},
		{name: "negative auth cache ttl", env: map[string]string{"BATON_AUTH_CACHE_TTL": "-1s"}, wantErr: "BATON_AUTH_CACHE_TTL"},
		{name: "zero auth cache size", env: map[string]string{"BATON_AUTH_CACHE_SIZE": "0"}, wantErr: "BATON_AUTH_CACHE_SIZE"},
		{name: "OIDC", env: map[string]string{"BATON_OIDC_ISSUER": "https://login.example.com/", "BATON_OIDC_AUDIENCE": "baton"},
			want: with(func(c *gateway.Config) {
				c.OIDC = gateway.OIDCConfig{Issuer: "https://login.example.com/", Audience: "baton", EmailClaim: "email"}
			})},
		{name: "OIDC with its key set and claim", env: map[string]string{"BATON_OIDC_ISSUER": "https://login.example.com",
			"BATON_OIDC_AUDIENCE": "baton", "BATON_OIDC_JWKS_URL": "https://login.example.com/keys", "BATON_OIDC_EMAIL_CLAIM": "upn"},
			want: with(func(c *gateway.Config) {
				c.OIDC = gateway.OIDCConfig{Issuer: "https://login.example.com", Audience: "baton",
					JWKSURL: "https://login.example.com/keys", EmailClaim: "upn"}
			})},
		{name: "OIDC without an audience", env: map[string]string{"BATON_OIDC_ISSUER": "https://login.example.com"}, wantErr: "BATON_OIDC_AUDIENCE"},
		{name: "OIDC issuer not a URL", env: map[string]string{"BATON_OIDC_ISSUER": "login.example.com", "BATON_OIDC_AUDIENCE": "baton"}, wantErr: "BATON_OIDC_ISSUER"},
		{name: "OIDC key set not a URL", env: map[string]string{"BATON_OIDC_ISSUER": "https://login.example.com", "BATON_OIDC_AUDIENCE": "baton",
			"BATON_OIDC_JWKS_URL": "/keys"}, wantErr: "BATON_OIDC_JWKS_URL"},
		{name: "OIDC settings without an issuer", env: map[string]string{"BATON_OIDC_AUDIENCE": "baton"}, wantErr: "BATON_OIDC_ISSUER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := gateway.ConfigFromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}

func TestConfigLogValueHidesTheToken(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("config", "gateway", gateway.Config{BootstrapToken: "s3cret"})
	assert.NotContains(t, buf.String(), "s3cret")
	assert.Contains(t, buf.String(), "bootstrapToken=********")
}

func TestNewRequiresItsDeps(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("a-service-key-for-gateway-tests"))
	require.NoError(t, err)
	tests := []struct {
		name string
		deps gateway.Deps
		want string
	}{
		{"no resolver", gateway.Deps{Signer: signer}, "Resolver"},
		{"no signer", gateway.Deps{Resolver: registry.NewStatic(nil)}, "Signer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := gateway.New(gateway.Config{}, tt.deps)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestRunReturnsWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("a-service-key-for-gateway-tests"))
	require.NoError(t, err)
	g, err := gateway.New(gateway.Config{}, gateway.Deps{Resolver: registry.NewStatic(nil), Signer: signer})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
}

// closedPortURL returns the base URL of a loopback port nothing listens on until the test
// ends.
func closedPortURL(t testing.TB) string {
	t.Helper()
	return "http://" + testkit.ClosedAddr(t)
}

package gateway_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/baton-flow/baton/gateway"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/registry"
)

func TestDocsAreOpenAndServedByTheGateway(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{})
	tests := []struct {
		name     string
		path     string
		header   map[string]string
		wantType string
	}{
		{name: "the document without credentials", path: "/api/v2/openapi.yaml", wantType: "application/yaml"},
		{name: "the page without credentials", path: "/api/v2/docs", wantType: "text/html"},
		{name: "credentials are not looked at", path: "/api/v2/docs", header: bearer("not-a-token"), wantType: "text/html"},
		{name: "a trailing slash", path: "/api/v2/docs/", wantType: "text/html"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, raw := h.do(t, request{method: http.MethodGet, path: tt.path, header: tt.header})
			require.Equal(t, http.StatusOK, resp.StatusCode, "body: %.300s", raw)
			assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), tt.wantType), resp.Header.Get("Content-Type"))
			assert.NotEmpty(t, resp.Header.Get("ETag"))
			assert.NotEmpty(t, resp.Header.Get(httpx.HeaderRequestID))
		})
	}

	// The document is what the gateway serves, and it parses.
	_, raw := h.do(t, request{method: http.MethodGet, path: "/api/v2/openapi.yaml"})
	var doc struct {
		OpenAPI string         `yaml:"openapi"`
		Paths   map[string]any `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	assert.Equal(t, "3.1.0", doc.OpenAPI)
	assert.Contains(t, doc.Paths, "/api/v2/team/{team}/workflow")

	// Neither was proxied.
	for name, u := range h.upstreams {
		assert.Empty(t, u.calls, "%s received a request", name)
	}
}

func TestDocsAnswerOnlyGetAndHead(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{})
	resp, raw := h.do(t, request{method: http.MethodHead, path: "/api/v2/openapi.yaml"})
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, raw)

	for _, path := range []string{"/api/v2/openapi.yaml", "/api/v2/docs"} {
		resp, raw := h.do(t, request{method: http.MethodPost, path: path, body: []byte("{}")})
		requireError(t, resp, raw, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", path)
		assert.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
	}
	for name, u := range h.upstreams {
		assert.Empty(t, u.calls, "%s received a request", name)
	}
}

func TestDocsAnswerOnALockedInstallation(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("gateway-docs-test-key-0123456789"))
	require.NoError(t, err)
	g, err := gateway.New(gateway.Config{BootstrapToken: "bt-docs-test"},
		gateway.Deps{Resolver: registry.NewStatic(nil), Signer: signer, Activation: &lock{}})
	require.NoError(t, err)
	app := httpx.NewApp(httpx.Config{Name: gateway.Name})
	g.Routes(app)

	for _, path := range []string{"/api/v2/openapi.yaml", "/api/v2/docs", "/api/v2/team/query"} {
		resp, err := app.Test(httptest.NewRequest(http.MethodGet, path, nil), -1)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		want := http.StatusOK
		if path == "/api/v2/team/query" {
			want = http.StatusLocked // the rest of the API stays locked
		}
		assert.Equal(t, want, resp.StatusCode, path)
	}
}

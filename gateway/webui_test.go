package gateway_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway"
	"github.com/baton-flow/baton/gateway/internal/webui"
)

// TestWebUI holds that the gateway serves its web UI outside /api/ without credentials,
// with its security headers, while the API keeps its own answers.
func TestWebUI(t *testing.T) {
	t.Parallel()
	h := newHarness(t, gateway.Config{})
	tests := []struct {
		name       string
		method     string
		path       string
		wantStatus int
		wantType   string
	}{
		{name: "the root", method: "GET", path: "/", wantStatus: 200, wantType: "text/html; charset=utf-8"},
		{name: "a deep link", method: "GET", path: "/teams/infra/runs?statuses=failed", wantStatus: 200, wantType: "text/html; charset=utf-8"},
		{name: "HEAD of a deep link", method: "HEAD", path: "/signin", wantStatus: 200, wantType: "text/html; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, _ := h.do(t, request{method: tt.method, path: tt.path})
			require.Equal(t, tt.wantStatus, resp.StatusCode)
			assert.Equal(t, tt.wantType, resp.Header.Get("Content-Type"))
			for k, v := range webui.Headers {
				assert.Equal(t, v, resp.Header.Get(k), k)
			}
		})
	}

	t.Run("the API still asks for credentials", func(t *testing.T) {
		t.Parallel()
		resp, raw := h.do(t, request{method: "GET", path: "/api/v2/profile"})
		requireError(t, resp, raw, http.StatusUnauthorized, "UNAUTHENTICATED", "/api/v2/profile")
	})
}

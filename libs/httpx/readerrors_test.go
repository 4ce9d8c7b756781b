package httpx_test

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/baton-flow/baton/libs/httpx"
)

// TestErrorsOfUnreadRequestsNameThem: what the app answers before any handler runs (a URI
// or head too long, an unknown path) names the request's path and carries a trace ID, as
// every error body does.
func TestErrorsOfUnreadRequestsNameThem(t *testing.T) {
	t.Parallel()
	otel.SetTracerProvider(sdktrace.NewTracerProvider())
	app := httpx.NewApp(httpx.Config{Name: "test"})
	app.Get("/runs/:id", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusOK) })
	app.Use(func(c *fiber.Ctx) error { return fiber.ErrNotFound })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })

	tests := []struct {
		name       string
		target     string
		header     string
		wantStatus int
		wantPath   string
	}{
		{"an unknown path", "/nowhere/at/all", "", 404, "/nowhere/at/all"},
		{"a URI over half the limit", "/runs/7?x=" + strings.Repeat("a", httpx.HeaderLimit/2), "", 414, "/runs/7"},
		{"a request line over the limit", "/runs/7?x=" + strings.Repeat("a", httpx.HeaderLimit), "", 431, "/runs/7"},
		{"a header over the limit", "/runs/7", "X-Big: " + strings.Repeat("b", httpx.HeaderLimit), 431, "/runs/7"},
		{"many headers over the limit", "/runs/7", strings.Repeat("X-Many: "+strings.Repeat("m", 100)+"\r\n", 200) + "X-Last: 1", 431, "/runs/7"},
		{"a body over the limit", "/runs/7", "Content-Length: 2000000", 413, "/runs/7"},
		{"a path longer than what the error quotes", "/" + strings.Repeat("p", 300) + "?x=" + strings.Repeat("a", httpx.HeaderLimit), "", 431, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := rawGet(t, ln.Addr().String(), tt.target, tt.header)
			require.Equal(t, tt.wantStatus, resp.StatusCode)
			var body httpx.ErrorBody
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
			assert.Equal(t, tt.wantStatus, body.Status)
			assert.Equal(t, tt.wantPath, strings.TrimSuffix(body.Path, "/"), "the path the request line names, or none")
			assert.Regexp(t, `^[0-9a-f]{32}$`, body.TraceID)
		})
	}
}

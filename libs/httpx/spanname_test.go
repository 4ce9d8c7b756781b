package httpx

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A request's server span is named by its method and the operation it asked for: the
// route it matched, or the one a catch-all handler named, never the path with its ids.
// Not parallel: the app's tracing takes the global tracer provider.
func TestSpanNamedByMethodAndRoute(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	app := NewApp(Config{Name: "t"})
	app.Get("/api/v2/team/:team", func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusNoContent) })
	app.All("/proxied/*", func(c *fiber.Ctx) error {
		if c.Method() == http.MethodPost {
			SpanRoute(c, "/api/v2/team/:team/workflow/:name/submit")
		}
		return c.SendStatus(fiber.StatusNoContent)
	})

	tests := []struct {
		method, target, want string
	}{
		{http.MethodGet, "/api/v2/team/infra", "GET /api/v2/team/:team"},
		{http.MethodPost, "/proxied/team/infra/workflow/build/submit", "POST /api/v2/team/:team/workflow/:name/submit"},
		{http.MethodGet, "/proxied/anything", "GET /proxied/*"},
	}
	for _, tt := range tests {
		res, err := app.Test(httptest.NewRequest(tt.method, tt.target, nil))
		require.NoError(t, err)
		require.Equal(t, fiber.StatusNoContent, res.StatusCode)
		spans := rec.Ended()
		require.NotEmpty(t, spans)
		assert.Equal(t, tt.want, spans[len(spans)-1].Name(), tt.target)
	}
}

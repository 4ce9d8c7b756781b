package httpx

import (
	"fmt"
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

func TestRedactedURI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, query, want string
	}{
		{"no query", "/api/v2/callback", "", "/api/v2/callback"},
		{"no token", "/api/v2/callback", "ref=r1&topic=t", "/api/v2/callback?ref=r1&topic=t"},
		{"token", "/api/v2/callback", "ref=r1&access_token=s3cret&topic=t", "/api/v2/callback?ref=r1&access_token=********&topic=t"},
		{"token twice", "/api/v2/event", "access_token=a&access_token=b", "/api/v2/event?access_token=********&access_token=********"},
		{"encoded key", "/api/v2/event", "access%5Ftoken=s3cret", "/api/v2/event?access%5Ftoken=********"},
		{"undecodable key", "/api/v2/event", "%zz=s3cret", "/api/v2/event?%zz=********"},
		{"other case", "/api/v2/event", "ACCESS_TOKEN=s3cret", "/api/v2/event?ACCESS_TOKEN=********"},
		{"key without value", "/api/v2/event", "access_token", "/api/v2/event?access_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, RedactedURI(tt.path, []byte(tt.query)))
		})
	}
}

// A request's span holds its target and URL with the query's tokens masked: spans leave
// the process as logs do.
func TestSpansHoldNoQueryToken(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	app := NewApp(Config{Name: "t"})
	app.Get("/api/v2/callback", func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusNoContent) })
	res, err := app.Test(httptest.NewRequest(http.MethodGet, "/api/v2/callback?ref=r1&access_token=s3cret", nil))
	require.NoError(t, err)
	require.Equal(t, fiber.StatusNoContent, res.StatusCode)

	spans := rec.Ended()
	require.Len(t, spans, 1)
	attrs := map[string]string{}
	for _, a := range spans[0].Attributes() {
		attrs[string(a.Key)] = a.Value.Emit()
	}
	assert.Equal(t, "/api/v2/callback?ref=r1&access_token=********", attrs["http.target"])
	assert.Equal(t, "/api/v2/callback?ref=r1&access_token=********", attrs["http.url"])
	assert.NotContains(t, fmt.Sprint(attrs), "s3cret")
}

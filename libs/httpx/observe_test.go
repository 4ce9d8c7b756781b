package httpx

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-flow/baton/libs/apperr"
)

// The request families have one series per service, route pattern, method and status,
// whatever the path's ids or the Host a client sends (a catch-all is one route, whatever
// operation it names for its spans); an error's status is the one its answer has, and a
// handler's panic counts as the 500 it is answered; the in-flight gauge comes back to zero;
// probes are not counted.
func TestRequestMetricsByRoute(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	app := NewApp(Config{Name: "runs", Meter: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	app.Get("/health", func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusOK) })
	app.Get("/api/v2/team/:team", func(c *fiber.Ctx) error {
		if c.Params("team") == "ghost" {
			return apperr.New(apperr.TeamNotFound, "Team 'ghost' was not found.")
		}
		return c.SendString("{}")
	})
	app.Get("/panic", func(*fiber.Ctx) error { panic("broken") })
	app.All("/proxied/*", func(c *fiber.Ctx) error {
		SpanRoute(c, "/api/v2/team/:team/workflow/:name/submit")
		return c.SendStatus(fiber.StatusAccepted)
	})
	for _, target := range []string{"/api/v2/team/a", "/api/v2/team/b", "/api/v2/team/ghost", "/health", "/panic",
		"/proxied/team/a/workflow/w/submit", "/proxied/team/b/workflow/v/submit"} {
		for _, host := range []string{"a.example", "b.example:8080"} {
			req := httptest.NewRequest(http.MethodGet, target, nil)
			req.Host = host
			res, err := app.Test(req)
			require.NoError(t, err)
			require.NoError(t, res.Body.Close())
		}
	}

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	require.Len(t, rm.ScopeMetrics, 1)
	counts := map[string]uint64{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch m.Name {
		case metricDuration:
			for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				assert.ElementsMatch(t, []attribute.Key{"http.flavor", "http.method", "http.scheme", "http.server_name", "http.status_code", "http.route"},
					keys(p.Attributes), "the labels, and no other")
				route, _ := p.Attributes.Value("http.route")
				status, _ := p.Attributes.Value("http.status_code")
				counts[route.AsString()+" "+status.Emit()] += p.Count
			}
		case metricActiveRequests:
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				assert.Zero(t, p.Value, "nothing in flight")
			}
		}
	}
	assert.Equal(t, map[string]uint64{
		"/api/v2/team/:team 200": 4,
		"/api/v2/team/:team 404": 2,
		"/panic 500":             2,
		"/proxied/* 202":         4,
	}, counts)
}

func keys(s attribute.Set) []attribute.Key {
	var out []attribute.Key
	for _, kv := range s.ToSlice() {
		out = append(out, kv.Key)
	}
	return out
}

// A request that carries a traceparent is served in that trace, and its answer names the
// server span; a server error marks the span. Not parallel: the app's tracing takes the
// global tracer provider and propagator.
func TestRequestContinuesItsTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTracerProvider(prevTP); otel.SetTextMapPropagator(prevProp) })
	app := NewApp(Config{Name: "t"})
	app.Get("/boom", func(*fiber.Ctx) error { return apperr.New(apperr.Internal, "broken") })

	req := httptest.NewRequest(http.MethodGet, "/boom", nil)
	req.Header.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	res, err := app.Test(req)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	assert.Equal(t, fiber.StatusInternalServerError, res.StatusCode)

	spans := rec.Ended()
	require.Len(t, spans, 1)
	s := spans[0]
	assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", s.SpanContext().TraceID().String())
	assert.Equal(t, "b7ad6b7169203331", s.Parent().SpanID().String())
	assert.Equal(t, "GET /boom", s.Name())
	assert.Equal(t, "Error", s.Status().Code.String())
	assert.Equal(t, "00-0af7651916cd43dd8448eb211c80319c-"+s.SpanContext().SpanID().String()+"-01", res.Header.Get("traceparent"))
}

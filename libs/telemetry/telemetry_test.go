package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"

	"github.com/baton-flow/baton/libs/telemetry"
)

// Setup installs real providers: spans get trace IDs (recorded only for an exporter), logs
// carry them, and metrics reach the Prometheus endpoint.
func TestSetup(t *testing.T) {
	ctx := context.Background()
	tel, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "test", Version: "1"})
	require.NoError(t, err)
	defer func() { require.NoError(t, tel.Shutdown(ctx)) }()

	ctx, span := otel.Tracer("test").Start(ctx, "work")
	require.True(t, span.SpanContext().IsValid())
	assert.False(t, span.IsRecording(), "with no exporter, no span is recorded")
	var buf bytes.Buffer
	telemetry.NewLogger(&buf, slog.LevelInfo).InfoContext(ctx, "hello")
	span.End()
	var rec map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &rec))
	assert.Equal(t, span.SpanContext().TraceID().String(), rec["trace_id"])

	counter, err := otel.Meter("test").Int64Counter("baton_test_things", metric.WithDescription("things"))
	require.NoError(t, err)
	counter.Add(ctx, 3)
	rr := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(rr, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rr.Body)
	assert.Contains(t, string(body), "baton_test_things")
	assert.Contains(t, string(body), "go_goroutines")

	carrier := map[string]string{}
	otel.GetTextMapPropagator().Inject(ctx, propagation.MapCarrier(carrier))
	assert.Contains(t, carrier, "traceparent")
}

// Disabled makes no span and serves the runtime's families only, while a traceparent that
// came in still goes on.
func TestSetupDisabled(t *testing.T) {
	tel, err := telemetry.Setup(context.Background(), telemetry.Config{ServiceName: "test", Disabled: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }()

	_, span := otel.Tracer("test").Start(context.Background(), "work")
	assert.False(t, span.SpanContext().IsValid(), "no span is made")
	span.End()
	in := propagation.MapCarrier{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	ctx := otel.GetTextMapPropagator().Extract(context.Background(), in)
	ctx, span = otel.Tracer("test").Start(ctx, "work")
	span.End()
	out := propagation.MapCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, out)
	assert.Equal(t, in["traceparent"], out["traceparent"], "the caller's trace goes on")

	counter, err := tel.MeterProvider().Meter("test").Int64Counter("baton_test_off")
	require.NoError(t, err)
	counter.Add(context.Background(), 3)
	rr := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(rr, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rr.Body)
	assert.NotContains(t, string(body), "baton_test_off")
	assert.Contains(t, string(body), "go_goroutines")
}

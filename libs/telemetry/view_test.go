package telemetry

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The HTTP middleware's families lose the Host header a client sends, and keep the route's
// pattern and status; another scope's labels are left as they are.
func TestHTTPFamiliesDropTheHost(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithView(boundedHTTP))
	attrs := metric.WithAttributes(attribute.String("http.route", "/api/v2/team/:team"), attribute.Int("http.status_code", 200),
		attribute.String("net.host.name", "anything.example:8080"), attribute.Int("net.host.port", 8080))
	for _, scope := range []string{httpScope, "other"} {
		h, err := mp.Meter(scope).Float64Histogram("http.server.duration")
		require.NoError(t, err)
		for _, host := range []string{"a.example", "b.example"} {
			h.Record(context.Background(), 1, attrs, metric.WithAttributes(attribute.String("net.host.name", host)))
		}
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	got := map[string][]attribute.Set{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				got[sm.Scope.Name] = append(got[sm.Scope.Name], p.Attributes)
			}
		}
	}
	require.Len(t, got[httpScope], 1, "one series whatever the Host")
	set := got[httpScope][0]
	assert.False(t, set.HasValue("net.host.name"))
	assert.False(t, set.HasValue("net.host.port"))
	assert.True(t, set.HasValue("http.route"))
	assert.True(t, set.HasValue("http.status_code"))
	assert.Len(t, got["other"], 2, "another scope keeps its labels")
}

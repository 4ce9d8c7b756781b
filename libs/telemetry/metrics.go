package telemetry

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// MetricLabelsEnv names the variable that adds team and workflow labels to the workflow
// metrics (runs, tasks): a comma-separated list of "team" and "workflow", none by default.
const MetricLabelsEnv = "BATON_METRICS_LABELS"

// MetricLabels says which high-cardinality labels the workflow metrics carry. Off by
// default: each team or workflow multiplies the series of every family that carries it.
type MetricLabels struct {
	Team, Workflow bool
}

// ParseMetricLabels reads BATON_METRICS_LABELS: empty or "none" for neither, else a
// comma-separated list of team and workflow.
func ParseMetricLabels(raw string) (MetricLabels, error) {
	var l MetricLabels
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "none" {
		return l, nil
	}
	for _, f := range strings.Split(raw, ",") {
		switch strings.TrimSpace(f) {
		case "team":
			l.Team = true
		case "workflow":
			l.Workflow = true
		default:
			return MetricLabels{}, fmt.Errorf("%s: want a comma-separated list of team and workflow, got %q", MetricLabelsEnv, raw)
		}
	}
	return l, nil
}

// MeterProvider is the provider whose instruments /metrics serves. A process's units take
// their meters from it rather than from the global one, which a test process starting
// several instances sets again for each.
func (t *Telemetry) MeterProvider() metric.MeterProvider {
	if t == nil || t.meter == nil {
		return otel.GetMeterProvider()
	}
	return t.meter
}

// httpScope is the instrumentation scope of the HTTP server middleware (otelfiber).
const httpScope = "github.com/gofiber/contrib/otelfiber"

// boundedHTTP keeps the HTTP server families' labels to bounded ones: the middleware labels
// each request with net.host.name, the Host header as the client sent it (any client can
// make a series per request with it), and net.host.port. The route (its pattern, never the
// path), method, status code, scheme, flavor and server name stay.
var boundedHTTP = sdkmetric.NewView(
	sdkmetric.Instrument{Scope: instrumentation.Scope{Name: httpScope}},
	sdkmetric.Stream{AttributeFilter: attribute.NewDenyKeysFilter("net.host.name", "net.host.port")},
)

package telemetry

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
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
	if t != nil && t.off {
		return metricnoop.NewMeterProvider()
	}
	if t == nil || t.meter == nil {
		return otel.GetMeterProvider()
	}
	return t.meter
}

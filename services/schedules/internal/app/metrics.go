package app

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// What a schedule's fire came to, the outcome label of baton_schedules_fires_total.
const (
	// FireRun made a run.
	FireRun = "run"
	// FireSkipped made none: the previous run went on and the overlap policy skips (or
	// buffers one fire, and one was buffered already).
	FireSkipped = "skipped"
	// FireBuffered is kept until the previous run ends (overlap bufferOne); it counts again
	// as run when it starts.
	FireBuffered = "buffered"
	// FireMisfire was missed (no scheduler ran at its time) and dropped by the misfire
	// policy.
	FireMisfire = "misfire"
	// FireRefused was refused by the runs service (the workflow gone, its trigger off, the
	// team's quota used up).
	FireRefused = "refused"
)

// skewBuckets: a fire on time makes its run within the scheduler's tick (a second or two);
// a late one after a restart or a wait for the previous run, minutes to hours.
var skewBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600}

// meterName is the instrumentation scope of the schedules' instruments.
const meterName = "github.com/baton-flow/baton/services/schedules/app"

// FireMetrics are the instruments of schedules' fires.
type FireMetrics struct {
	fires metric.Int64Counter
	skew  metric.Float64Histogram
}

// NewFireMetrics makes the instruments from mp.
func NewFireMetrics(mp metric.MeterProvider) *FireMetrics {
	meter := mp.Meter(meterName)
	m := &FireMetrics{}
	// Errors from the SDK only say an instrument's name is malformed, which these are not.
	m.fires, _ = meter.Int64Counter("baton_schedules_fires",
		metric.WithDescription("Schedules' fires, by what they came to: run, skipped, buffered, misfire or refused."),
		metric.WithUnit("{fire}"))
	m.skew, _ = meter.Float64Histogram("baton_schedules_fire_skew",
		metric.WithDescription("Time from a fire's planned time to the creation of its run."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(skewBuckets...))
	return m
}

// made records a fire planned at that made a run at now.
func (m *FireMetrics) made(at, now time.Time) {
	if m == nil {
		return
	}
	ctx := context.Background()
	m.fires.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", FireRun)))
	m.skew.Record(ctx, max(now.Sub(at).Seconds(), 0))
}

// record adds what out counted.
func (m *FireMetrics) record(out fireOutcomes) {
	if m == nil {
		return
	}
	for outcome, n := range out {
		if n > 0 {
			m.fires.Add(context.Background(), int64(n), metric.WithAttributes(attribute.String("outcome", outcome)))
		}
	}
}

// fireOutcomes counts the outcomes of one Work, but runs made.
type fireOutcomes map[string]int

func (o *fireOutcomes) add(outcome string, n int) {
	if n == 0 {
		return
	}
	if *o == nil {
		*o = fireOutcomes{}
	}
	(*o)[outcome] += n
}

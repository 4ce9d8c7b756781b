package app

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// What an attempt to deliver an event to a sink came to, the outcome label of
// baton_integrations_sink_deliveries_total.
const (
	// DeliveryDelivered: the sink answered 2xx.
	DeliveryDelivered = "delivered"
	// DeliveryRetried: the attempt failed and another is due.
	DeliveryRetried = "retried"
	// DeliveryGivenUp: the attempt failed past the give-up age; the event is kept in
	// sinkfailures.
	DeliveryGivenUp = "given_up"
)

// deliveryBuckets: an event recorded reaches a sink that is up within milliseconds to a
// second; retries stretch it to minutes and hours, up to the give-up age (24h by default).
var deliveryBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60, 300, 1800, 3600, 6 * 3600, 24 * 3600}

// deliveryMeterName is the instrumentation scope of the deliveries' instruments.
const deliveryMeterName = "github.com/baton-flow/baton/services/integrations/app"

// deliveryMetrics are the instruments of sink deliveries. Sinks are not a label: their
// URLs may carry credentials, and each would multiply the series.
type deliveryMetrics struct {
	attempts metric.Int64Counter
	latency  metric.Float64Histogram
}

func newDeliveryMetrics(mp metric.MeterProvider) *deliveryMetrics {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(deliveryMeterName)
	m := &deliveryMetrics{}
	// Errors from the SDK only say an instrument's name is malformed, which these are not.
	m.attempts, _ = meter.Int64Counter("baton_integrations_sink_deliveries",
		metric.WithDescription("Attempts to deliver a status event to a sink, by outcome: delivered, retried or given_up."),
		metric.WithUnit("{attempt}"))
	m.latency, _ = meter.Float64Histogram("baton_integrations_sink_delivery_latency",
		metric.WithDescription("Time from an event's recording for a sink to its delivery (or its giving up), retries included, by outcome."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(deliveryBuckets...))
	return m
}

// attempted records an attempt that came to outcome at now for an event recorded at
// recorded; the latency is recorded for the attempts that ended the event's delivery.
func (m *deliveryMetrics) attempted(outcome string, recorded, now time.Time) {
	ctx := context.Background()
	kind := metric.WithAttributes(attribute.String("outcome", outcome))
	m.attempts.Add(ctx, 1, kind)
	if outcome != DeliveryRetried && !recorded.IsZero() {
		m.latency.Record(ctx, max(now.Sub(recorded).Seconds(), 0), kind)
	}
}

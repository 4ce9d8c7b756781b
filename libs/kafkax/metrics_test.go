package kafkax_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/baton-flow/baton/libs/kafkax"
)

// series reads family name's points as their labels' "k=v,…" and value.
func series(t *testing.T, reader *sdkmetric.ManualReader, name string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[p.Attributes.Encoded(attribute.DefaultEncoder())] = p.Value
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out[p.Attributes.Encoded(attribute.DefaultEncoder())] = p.Value
				}
			}
		}
	}
	return out
}

// Messages published and consumed are counted by their unprefixed topic, the consumer's by
// its group label (not the group's own name), and its lag is reported while it runs.
func TestKafkaMetrics(t *testing.T) {
	t.Parallel()
	env := newEnv(t, "metered")
	reader := sdkmetric.NewManualReader()
	env.cfg.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	p := env.producer(t)
	for _, id := range []string{"a", "b", "c"} {
		require.NoError(t, p.Publish(context.Background(), "metered", id, newEvent(t, id)))
	}
	assert.Equal(t, map[string]int64{"topic=metered": 3}, series(t, reader, "baton_kafka_published"))

	var handled atomic.Int64
	env.startConsumer(t, kafkax.ConsumerOptions{GroupID: "group-replica-1234", GroupLabel: "group", Topic: "metered",
		Handler: func(context.Context, event.Event) error { handled.Add(1); return nil }})
	eventually(t, "three consumed", func() bool {
		return series(t, reader, "baton_kafka_consumed")["group=group,topic=metered"] == 3
	})
	assert.Equal(t, int64(3), handled.Load())
	lag := series(t, reader, "baton_kafka_consumer_lag")
	require.Contains(t, lag, "group=group,topic=metered", "the running consumer's lag is reported")
	assert.GreaterOrEqual(t, lag["group=group,topic=metered"], int64(0))
}

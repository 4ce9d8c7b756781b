package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// deliveryCounts reads the attempts by outcome, and the latencies' count and sum by outcome.
func deliveryCounts(t *testing.T, reader *sdkmetric.ManualReader) (attempts map[string]int64, latencies map[string][2]float64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	attempts, latencies = map[string]int64{}, map[string][2]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value("outcome")
					attempts[v.AsString()] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value("outcome")
					latencies[v.AsString()] = [2]float64{float64(p.Count), p.Sum}
				}
			}
		}
	}
	return attempts, latencies
}

// Each attempt is counted by outcome once its state is stored: four retries, the event
// given up, the next delivered; the latency from recording to the end of delivery is
// measured for the two that ended.
func TestDeliveryMetrics(t *testing.T) {
	t.Parallel()
	send := newSender(func(_ context.Context, _, id string) error {
		if id == "run/0" {
			return errDown
		}
		return nil
	})
	store, set := newMemStore(), &sinks{}
	set.set(sinkA)
	t0 := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	c := testkit.NewClock(t0)
	reader := sdkmetric.NewManualReader()
	retry := domain.Retry{First: time.Second, Max: 4 * time.Second, GiveUpAfter: 10 * time.Second}
	d := app.NewDeliveries(app.DeliveryConfig{Poll: time.Hour, Retry: retry}, app.DeliveryDeps{Store: store, Settings: set, Sender: send,
		Now: c.Now, Owner: "r1", NewID: func() string { return fmt.Sprintf("m%d", ids.Add(1)) },
		Meter: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	record(t, d, statusEvent("run", 0))
	record(t, d, statusEvent("run", 1))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	for n := 1; n <= 4; n++ {
		require.Eventually(t, func() bool { return len(store.attempts()) == n }, wait, tick, "attempt %d", n)
		a := store.attempts()[n-1]
		c.Set(a.due)
		d.Wake(a.queue)
	}
	require.Eventually(t, func() bool { return len(send.received(sinkA)) == 1 }, wait, tick)
	require.Eventually(t, func() bool {
		attempts, _ := deliveryCounts(t, reader)
		return attempts[app.DeliveryDelivered] == 1
	}, wait, tick)
	attempts, latencies := deliveryCounts(t, reader)
	assert.Equal(t, map[string]int64{app.DeliveryRetried: 4, app.DeliveryGivenUp: 1, app.DeliveryDelivered: 1}, attempts)
	assert.Equal(t, map[string][2]float64{app.DeliveryGivenUp: {1, 11}, app.DeliveryDelivered: {1, 11}}, latencies,
		"both recorded at 0s, ended at 11s")
}

package app

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// fireCounts reads baton_schedules_fires by outcome, and how many skews were recorded.
func fireCounts(t *testing.T, reader *sdkmetric.ManualReader) (map[string]int64, uint64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	counts := map[string]int64{}
	var skews uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value("outcome")
					counts[v.AsString()] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					skews += p.Count
				}
			}
		}
	}
	return counts, skews
}

// Each fire is counted by what it came to, once the schedule moved on is stored; a run
// made has its skew measured.
func TestFireMetrics(t *testing.T) {
	t.Parallel()
	late := base.Add(3*time.Hour + 10*time.Minute)
	tests := []struct {
		name string
		s    func() domain.Schedule
		now  time.Time
		want map[string]int64
	}{
		{"due", hourly, base.Add(time.Second), map[string]int64{FireRun: 1}},
		{"missed, one catch-up", hourly, late, map[string]int64{FireRun: 1, FireMisfire: 3}},
		{"missed, none", func() domain.Schedule { s := hourly(); s.Misfire = domain.MisfireSkip; return s },
			late, map[string]int64{FireMisfire: 4}},
		{"overlap skip", func() domain.Schedule {
			s := hourly()
			s.Overlap, s.LastRun = domain.OverlapSkip, "previous"
			return s
		}, base.Add(time.Second), map[string]int64{FireSkipped: 1}},
		{"overlap buffer", func() domain.Schedule {
			s := hourly()
			s.Overlap, s.LastRun = domain.OverlapBufferOne, "previous"
			return s
		}, base.Add(time.Second), map[string]int64{FireBuffered: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reader := sdkmetric.NewManualReader()
			store, runs := &fakeClaims{s: tt.s()}, newFakeRuns()
			f := &Firer{Store: store, Runs: runs, Metrics: NewFireMetrics(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))}
			_, err := work(t, f, store, tt.now)
			require.NoError(t, err)
			counts, skews := fireCounts(t, reader)
			assert.Equal(t, tt.want, counts)
			assert.Equal(t, uint64(tt.want[FireRun]), skews, "one skew per run made")
		})
	}
}

// Fires decided by a holder that then loses its claim count nothing: the next holder
// decides them again. A run made counts once, however often its fire is submitted.
func TestFireMetricsCountAFireDoneAgainOnce(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	metrics := NewFireMetrics(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	s := hourly()
	s.Overlap, s.LastRun = domain.OverlapSkip, "previous"
	s.Misfire, s.CatchupWindow = domain.MisfireFireAll, 4*time.Hour
	store := &fakeClaims{s: s}
	// The plan is stored (the first Keep); the schedule moved on is not (the second).
	store.before = func(fc *fakeClaims) error {
		fc.before = func(*fakeClaims) error { return domain.ErrConflict }
		return nil
	}
	f := &Firer{Store: store, Runs: newFakeRuns(), Metrics: metrics}
	_, err := work(t, f, store, base.Add(3*time.Hour+10*time.Minute))
	require.ErrorIs(t, err, domain.ErrConflict)
	counts, _ := fireCounts(t, reader)
	assert.Empty(t, counts, "four fires skipped, none stored")

	runs := newFakeRuns()
	f = &Firer{Store: &fakeClaims{s: hourly()}, Runs: runs, Metrics: metrics, Now: func() time.Time { return base.Add(time.Second) }}
	one := hourly()
	for range 3 {
		require.NoError(t, f.submit(context.Background(), &one, base))
	}
	counts, skews := fireCounts(t, reader)
	assert.Equal(t, map[string]int64{FireRun: 1}, counts)
	assert.Equal(t, uint64(1), skews)
}

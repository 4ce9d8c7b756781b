package storemetrics_test

import (
	"context"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/memstore"
	"github.com/baton-flow/baton/services/runs/internal/storemetrics"
)

// counts reads how many calls were timed, by "op/outcome".
func counts(t *testing.T, reader *sdkmetric.ManualReader) map[string]uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				op, _ := p.Attributes.Value(attribute.Key("op"))
				outcome, _ := p.Attributes.Value(attribute.Key("outcome"))
				out[op.AsString()+"/"+outcome.AsString()] += p.Count
			}
		}
	}
	return out
}

// Each call is timed under its operation and what it answered; the store's answers pass
// through unchanged.
func TestStoreOperationsAreTimed(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	s := storemetrics.New(memstore.New(), sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	ctx := context.Background()

	_, err := s.FindRun(ctx, "missing")
	require.Error(t, err, "not found passes through")
	owed, err := s.FindOwed(ctx, time.Now(), 10)
	require.NoError(t, err)
	assert.Empty(t, owed)
	_, err = s.FindOwed(ctx, time.Now(), 10)
	require.NoError(t, err)
	err = s.SaveStep(ctx, &domain.Run{ID: "gone", Version: 3}, nil, nil)
	require.Error(t, err)

	got := counts(t, reader)
	assert.Equal(t, uint64(1), got["find_run/not_found"])
	assert.Equal(t, uint64(2), got["find_owed/ok"])
	assert.Len(t, got, 3, "%v", got)
	for k := range got {
		op, _, _ := strings.Cut(k, "/")
		assert.Contains(t, storemetrics.Ops, op)
	}
}

// Ops names every method of the store, and nothing else: the op label's values are those.
func TestOpsAreTheMethods(t *testing.T) {
	t.Parallel()
	upper := regexp.MustCompile(`([a-z])([A-Z])`)
	var methods []string
	typ := reflect.TypeFor[*storemetrics.RunStore]()
	for i := range typ.NumMethod() {
		methods = append(methods, strings.ToLower(upper.ReplaceAllString(typ.Method(i).Name, "${1}_${2}")))
	}
	assert.ElementsMatch(t, storemetrics.Ops, methods)
}

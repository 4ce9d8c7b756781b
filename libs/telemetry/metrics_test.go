package telemetry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/telemetry"
)

func TestParseMetricLabels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		want    telemetry.MetricLabels
		wantErr bool
	}{
		{give: "", want: telemetry.MetricLabels{}},
		{give: "none", want: telemetry.MetricLabels{}},
		{give: "team", want: telemetry.MetricLabels{Team: true}},
		{give: "workflow", want: telemetry.MetricLabels{Workflow: true}},
		{give: " team, workflow ", want: telemetry.MetricLabels{Team: true, Workflow: true}},
		{give: "team,run", wantErr: true},
		{give: "id", wantErr: true},
	}
	for _, tt := range tests {
		got, err := telemetry.ParseMetricLabels(tt.give)
		if tt.wantErr {
			assert.ErrorContains(t, err, telemetry.MetricLabelsEnv, tt.give)
			continue
		}
		require.NoError(t, err, tt.give)
		assert.Equal(t, tt.want, got, tt.give)
	}
}

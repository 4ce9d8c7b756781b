package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
)

func TestCheckCron(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name, expr, zone string
		valid            bool
		first            string
		reason           apperr.Reason
	}{
		{"weekdays, UTC", "0 9 * * MON-FRI", "", true, "2026-11-30T09:00:00Z", apperr.Reason{}},
		{"weekdays in a zone", "0 9 * * MON-FRI", "Asia/Tokyo", true, "2026-11-30T09:00:00+09:00", apperr.Reason{}},
		{"outside the dialect", "0 0 L * *", "", false, "", apperr.Reason{}},
		{"nonsense", "every tuesday", "", false, "", apperr.Reason{}},
		{"no expression", "", "", false, "", apperr.QueryInvalidFilters},
		{"an unknown zone", "0 9 * * *", "Mars/Olympus", false, "", apperr.ScheduleInvalidReq},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := CheckCron(tt.expr, tt.zone, now)
			if tt.reason != (apperr.Reason{}) {
				require.True(t, apperr.HasReason(err, tt.reason), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.valid, got.Valid)
			if !tt.valid {
				assert.NotEmpty(t, got.Message)
				assert.Empty(t, got.NextDates)
				return
			}
			require.Len(t, got.NextDates, NextDates)
			assert.Equal(t, tt.first, got.NextDates[0].Format(time.RFC3339))
		})
	}
}

// TestCheckCronNeverFires: an expression of the dialect that no date matches is not valid,
// with a message saying it never fires; a valid one's dates are the zone's instants.
func TestCheckCronNeverFires(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	got, err := CheckCron("0 0 30 2 *", "Europe/Paris", now)
	require.NoError(t, err)
	assert.False(t, got.Valid)
	assert.Contains(t, got.Message, "never fires")
	assert.Empty(t, got.NextDates)
}

package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTime(t *testing.T) {
	t.Parallel()
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	require.NoError(t, err)
	tests := []struct {
		name, give string
		want       time.Time
		wantErr    bool
	}{
		{name: "RFC 3339 keeps its offset", give: "2026-12-01T09:00:00Z", want: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)},
		{name: "a date is midnight in the zone", give: "2026-12-01", want: time.Date(2026, 12, 1, 0, 0, 0, 0, kolkata)},
		{name: "a wall time in the zone", give: "2026-12-01T09:30", want: time.Date(2026, 12, 1, 9, 30, 0, 0, kolkata)},
		{name: "with a space", give: "2026-12-01 09:30", want: time.Date(2026, 12, 1, 9, 30, 0, 0, kolkata)},
		{name: "not a time", give: "yesterday", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseTime(tt.give, kolkata)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.True(t, tt.want.Equal(got), "got %s, want %s", got, tt.want)
		})
	}
}

func TestParseExpiry(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		name, give string
		want       time.Time
		wantErr    bool
	}{
		{name: "days", give: "90d", want: now.AddDate(0, 0, 90)},
		{name: "a duration", give: "12h", want: now.Add(12 * time.Hour)},
		{name: "a date", give: "2027-01-01", want: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{name: "a past date", give: "2026-01-01", wantErr: true},
		{name: "no duration", give: "0d", wantErr: true},
		{name: "nonsense", give: "soon", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseExpiry(tt.give, now)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.True(t, tt.want.Equal(got), "got %s, want %s", got, tt.want)
		})
	}
}

// TestInZone: fire times are written in the schedule's zone, each with the abbreviation in
// force then, across a daylight saving change.
func TestInZone(t *testing.T) {
	t.Parallel()
	fires := []time.Time{time.Date(2026, 3, 28, 8, 0, 0, 0, time.UTC), time.Date(2026, 3, 29, 7, 0, 0, 0, time.UTC)}
	assert.Equal(t, []string{"2026-03-28 09:00 CET", "2026-03-29 09:00 CEST"}, inZone(fires, "Europe/Paris"))
	assert.Equal(t, []string{"2026-03-28 08:00 UTC"}, inZone(fires[:1], "Nowhere/Unknown"), "an unknown zone writes UTC")
}

package domain

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := LoadZone(name)
	require.NoError(t, err)
	return loc
}

func TestParseCron(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		ok   bool
	}{
		{"0 9 * * MON-FRI", true},
		{"0 0 12 * * ?", true},
		{"*/15 * * * *", true},
		{"0 0 1 JAN,JUL *", true},
		{"@daily", true},
		{"@every 90s", true},
		{"@every 1s", true},
		{"@every 500ms", false},
		{"@every 0s", false},
		{"@every -1m", false},
		{"0 0 L * *", false},
		{"0 0 1W * *", false},
		{"0 0 * * 1#2", false},
		{"TZ=UTC 0 * * * *", false},
		{"CRON_TZ=Europe/Paris 0 * * * *", false},
		{"", false},
		{"   ", false},
		{"61 * * * *", false},
		{"* * * * * * *", false},
		{"0 0 " + strings.Repeat("1,", 200) + "1 * *", false},
		{"\x00 * * * *", false},
		{"$gt * * * *", false},
	}
	for _, tt := range tests {
		_, err := ParseCron(tt.expr, time.UTC)
		if tt.ok {
			assert.NoError(t, err, tt.expr)
		} else {
			assert.True(t, errors.Is(err, ErrInvalidCron), "%q: %v", tt.expr, err)
		}
	}
}

func TestLoadZone(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{"": true, "UTC": true, "Europe/Paris": true, "America/New_York": true,
		"Mars/Olympus": false, "Local": false, "../../etc/passwd": false, "/etc/localtime": false, "Europe/Paris\x00": false,
		strings.Repeat("A", 100): false} {
		_, err := LoadZone(name)
		if ok {
			assert.NoError(t, err, name)
		} else {
			assert.True(t, errors.Is(err, ErrInvalidZone), "%q: %v", name, err)
		}
	}
}

// fires answers the first n fires of expr in zone after from.
func fires(t *testing.T, expr, zoneName string, from time.Time, n int) []string {
	t.Helper()
	loc := zone(t, zoneName)
	c, err := ParseCron(expr, loc)
	require.NoError(t, err)
	var out []string
	at := from
	for range n {
		at = c.Next(at)
		if at.IsZero() {
			out = append(out, "never")
			break
		}
		out = append(out, at.Format("2006-01-02 15:04 MST"))
	}
	return out
}

func TestCronNext(t *testing.T) {
	t.Parallel()
	ny := zone(t, "America/New_York")
	tests := []struct {
		name, expr, zone string
		from             time.Time
		want             []string
	}{
		{"weekdays in a zone", "0 9 * * MON-FRI", "Europe/Paris", time.Date(2026, 11, 27, 10, 0, 0, 0, zone(t, "Europe/Paris")),
			[]string{"2026-11-30 09:00 CET", "2026-12-01 09:00 CET"}},
		{"seconds first", "30 0 12 * * ?", "UTC", time.Date(2026, 11, 27, 12, 0, 30, 0, time.UTC),
			[]string{"2026-11-28 12:00 UTC", "2026-11-29 12:00 UTC"}},
		{"every 90 seconds counts real time", "@every 90s", "UTC", time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC),
			[]string{"2026-11-27 00:01 UTC", "2026-11-27 00:03 UTC"}},
		// Clocks go from 02:00 to 03:00 on 2026-03-08 in New York.
		{"a fire in a skipped hour happens when the hour ends", "30 2 * * *", "America/New_York", time.Date(2026, 3, 7, 23, 0, 0, 0, ny),
			[]string{"2026-03-08 03:00 EDT", "2026-03-09 02:30 EDT", "2026-03-10 02:30 EDT"}},
		{"fires through a skipped hour, each skipped one once", "*/30 * * * *", "America/New_York", time.Date(2026, 3, 8, 1, 15, 0, 0, ny),
			[]string{"2026-03-08 01:30 EST", "2026-03-08 03:00 EDT", "2026-03-08 03:30 EDT"}},
		{"a fire just after a skipped hour is not doubled", "0 3 * * *", "America/New_York", time.Date(2026, 3, 7, 23, 0, 0, 0, ny),
			[]string{"2026-03-08 03:00 EDT", "2026-03-09 03:00 EDT"}},
		// Clocks go from 02:00 back to 01:00 on 2026-11-01 in New York.
		{"a fire in a repeated hour happens once", "30 1 * * *", "America/New_York", time.Date(2026, 10, 31, 23, 0, 0, 0, ny),
			[]string{"2026-11-01 01:30 EDT", "2026-11-02 01:30 EST"}},
		{"an hourly expression fires through both passes", "*/30 * * * *", "America/New_York", time.Date(2026, 11, 1, 0, 45, 0, 0, ny),
			[]string{"2026-11-01 01:00 EDT", "2026-11-01 01:30 EDT", "2026-11-01 01:00 EST", "2026-11-01 01:30 EST", "2026-11-01 02:00 EST"}},
		// Lord Howe Island moves its clocks by half an hour: 02:00 → 02:30 on 2026-10-04.
		{"a half-hour change", "15 2 * * *", "Australia/Lord_Howe", time.Date(2026, 10, 3, 12, 0, 0, 0, zone(t, "Australia/Lord_Howe")),
			[]string{"2026-10-04 02:30 +11", "2026-10-05 02:15 +11"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, fires(t, tt.expr, tt.zone, tt.from, len(tt.want)))
		})
	}
}

func TestCronBetween(t *testing.T) {
	t.Parallel()
	c, err := ParseCron("0 * * * *", time.UTC)
	require.NoError(t, err)
	from := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	assert.Len(t, c.Between(from, from.Add(5*time.Hour), 100), 5, "(from, to]")
	assert.Len(t, c.Between(from, from.Add(5*time.Hour), 3), 3, "at most max")
	assert.Empty(t, c.Between(from, from.Add(30*time.Minute), 100))
}

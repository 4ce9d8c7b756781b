package domain

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScheduleNormalize(t *testing.T) {
	t.Parallel()
	valid := func() Schedule {
		return Schedule{Name: "nightly", Workflow: "build", Cron: "0 2 * * *", Timezone: "Europe/Paris"}
	}
	s := valid()
	require.NoError(t, s.Normalize())
	assert.Equal(t, Schedule{Name: "nightly", Workflow: "build", Cron: "0 2 * * *", Timezone: "Europe/Paris",
		Type: TypeCron, Status: StatusActive, Overlap: OverlapAllow, Misfire: MisfireFireOnce}, s, "defaults")
	unnamed := valid()
	unnamed.Name = " "
	require.NoError(t, unnamed.Normalize())
	assert.Equal(t, "build", unnamed.Name, "named after its workflow")

	tests := []struct {
		field string
		edit  func(*Schedule)
	}{
		{"name", func(s *Schedule) { s.Name = strings.Repeat("n", 257) }},
		{"workflowRef", func(s *Schedule) { s.Workflow = "" }},
		{"type", func(s *Schedule) { s.Type = "hourly" }},
		{"status", func(s *Schedule) { s.Status = "paused" }},
		{"overlapPolicy", func(s *Schedule) { s.Overlap = "queue" }},
		{"misfirePolicy", func(s *Schedule) { s.Misfire = "all" }},
		{"catchupWindow", func(s *Schedule) { s.CatchupWindow = -time.Hour }},
		{"timezone", func(s *Schedule) { s.Timezone = "" }},
		{"timezone", func(s *Schedule) { s.Timezone = "Mars/Olympus" }},
		{"cronSchedule", func(s *Schedule) { s.Cron = "0 0 L * *" }},
		{"dateSchedule", func(s *Schedule) { s.Type = TypeRunOnce }},
	}
	for _, tt := range tests {
		s := valid()
		tt.edit(&s)
		var fe *FieldError
		require.True(t, errors.As(s.Normalize(), &fe), tt.field)
		assert.Equal(t, tt.field, fe.Field)
	}
}

func TestSchedulePlan(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	hourly := func(p MisfirePolicy, window time.Duration) Schedule {
		return Schedule{ID: "s1", Type: TypeCron, Cron: "0 * * * *", Timezone: "UTC", Misfire: p, CatchupWindow: window, Next: base}
	}
	at := func(h int) time.Time { return base.Add(time.Duration(h) * time.Hour) }
	tests := []struct {
		name  string
		s     Schedule
		now   time.Time
		fires []time.Time
		next  time.Time
	}{
		{"nothing due yet", hourly(MisfireFireOnce, 0), base.Add(-time.Second), nil, base},
		{"on time", hourly(MisfireFireOnce, 0), base.Add(2 * time.Second), []time.Time{base}, at(1)},
		{"late within a minute is on time", hourly(MisfireSkip, 0), base.Add(OnTime), []time.Time{base}, at(1)},
		{"down three hours, fire once: the last missed", hourly(MisfireFireOnce, 0), at(3).Add(10 * time.Minute), []time.Time{at(3)}, at(4)},
		{"down three hours, fire once: an on-time fire is the one", hourly(MisfireFireOnce, 0), at(3).Add(10 * time.Second), []time.Time{at(3)}, at(4)},
		{"down three hours, skip", hourly(MisfireSkip, 0), at(3).Add(10 * time.Minute), nil, at(4)},
		{"down three hours, skip keeps the on-time fire", hourly(MisfireSkip, 0), at(3).Add(10 * time.Second), []time.Time{at(3)}, at(4)},
		{"down three hours, fire all within two", hourly(MisfireFireAll, 2*time.Hour), at(3).Add(10 * time.Minute), []time.Time{at(2), at(3)}, at(4)},
		{"down three hours, fire all within six", hourly(MisfireFireAll, 6*time.Hour), at(3).Add(10 * time.Minute), []time.Time{at(0), at(1), at(2), at(3)}, at(4)},
		{"run once, due", Schedule{Type: TypeRunOnce, Date: base, Next: base, Timezone: "UTC"}, base.Add(time.Second), []time.Time{base}, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fires, next := tt.s.Plan(tt.now)
			assert.Equal(t, tt.fires, fires)
			assert.True(t, tt.next.Equal(next), "next %s, want %s", next, tt.next)
		})
	}
}

// Down a year with a fire every second, a plan leaps to the fires that can still count
// rather than walking through 31 million of them.
func TestSchedulePlanAfterLongDowntime(t *testing.T) {
	t.Parallel()
	base := time.Date(2025, 11, 27, 0, 0, 0, 0, time.UTC)
	s := Schedule{Type: TypeCron, Cron: "@every 1s", Timezone: "UTC", Misfire: MisfireFireOnce, Next: base}
	now := base.Add(365 * 24 * time.Hour).Add(500 * time.Millisecond)
	fires, next := s.Plan(now)
	require.NotEmpty(t, fires)
	assert.LessOrEqual(t, len(fires), int(OnTime/time.Second)+1, "only the fires of the last minute, on time")
	assert.True(t, next.After(now))
}

func TestFireKey(t *testing.T) {
	t.Parallel()
	paris, err := LoadZone("Europe/Paris")
	require.NoError(t, err)
	at := time.Date(2026, 11, 27, 3, 0, 0, 0, paris)
	assert.Equal(t, "s1@2026-11-27T02:00:00Z", FireKey("s1", at), "one key for one instant, whatever the zone")
}

func TestScheduleCalendar(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	daily := Schedule{Type: TypeCron, Cron: "0 2 * * *", Timezone: "UTC"}
	got, err := daily.Calendar(from, from.Add(72*time.Hour))
	require.NoError(t, err)
	assert.Len(t, got, 3)
	assert.Equal(t, from.Add(2*time.Hour), got[0])

	atFrom := Schedule{Type: TypeCron, Cron: "0 0 * * *", Timezone: "UTC"}
	got, err = atFrom.Calendar(from, from)
	require.NoError(t, err)
	assert.Equal(t, []time.Time{from}, got, "the window holds its ends")

	secondly := Schedule{Type: TypeCron, Cron: "@every 1s", Timezone: "UTC"}
	got, err = secondly.Calendar(from, from.Add(24*time.Hour))
	require.NoError(t, err)
	assert.Len(t, got, MaxCalendarDates)

	once := Schedule{Type: TypeRunOnce, Date: from.Add(time.Hour), Timezone: "UTC"}
	got, err = once.Calendar(from, from.Add(24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, []time.Time{from.Add(time.Hour)}, got)

	var fe *FieldError
	_, err = daily.Calendar(from, from.Add(-time.Second))
	require.True(t, errors.As(err, &fe))
	_, err = daily.Calendar(from, from.Add(367*24*time.Hour))
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, "toDate", fe.Field)
}

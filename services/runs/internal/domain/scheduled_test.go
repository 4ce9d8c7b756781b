package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/libs/workflowid"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// When a runscheduledworkflow task asks its run to be due: periods from now (days and
// longer by the calendar of its zone, months kept within their month), a time of day in
// its zone, or a date and time; daylight saving days in Paris (clocks go forward on 29
// March 2026 at 02:00, back on 25 October at 03:00) and New York (8 March, 1 November).
func TestFireTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		now    string
		give   map[string]any
		want   string
		wantTZ string
	}{
		{name: "minutes", now: "2026-11-22T10:00:00Z", give: map[string]any{"futureIn": 1.0, "futurePeriod": "minutes"},
			want: "2026-11-22T10:01:00Z"},
		{name: "hours, futureIn as text, any case", now: "2026-11-22T10:00:00Z", give: map[string]any{"futureIn": " 3 ", "futurePeriod": "Hours"},
			want: "2026-11-22T13:00:00Z"},
		{name: "hours are durations across daylight saving", now: "2026-03-29T00:30:00Z",
			give: map[string]any{"futureIn": "2", "futurePeriod": "hours", "timezone": "Europe/Paris"}, want: "2026-03-29T02:30:00Z", wantTZ: "Europe/Paris"},
		{name: "a time of day means nothing to hours", now: "2026-11-22T10:00:00Z",
			give: map[string]any{"futureIn": "1", "futurePeriod": "hours", "time": "08:00"}, want: "2026-11-22T11:00:00Z"},
		{name: "a day is a date: the same wall clock across spring forward", now: "2026-03-28T09:00:00Z",
			give: map[string]any{"futureIn": "1", "futurePeriod": "days", "timezone": "Europe/Paris"}, want: "2026-03-29T08:00:00Z", wantTZ: "Europe/Paris"},
		{name: "days at a time of day in the zone", now: "2026-11-22T10:00:00Z",
			give: map[string]any{"futureIn": "2", "futurePeriod": "days", "time": "09:30", "timezone": "Europe/Paris"}, want: "2026-11-24T08:30:00Z", wantTZ: "Europe/Paris"},
		{name: "a week across New York's spring forward", now: "2026-03-02T15:00:00Z",
			give: map[string]any{"futureIn": 1.0, "futurePeriod": "weeks", "timezone": "America/New_York"}, want: "2026-03-09T14:00:00Z", wantTZ: "America/New_York"},
		{name: "a month after January 31 is February's last day", now: "2026-01-31T12:00:00Z",
			give: map[string]any{"futureIn": "1", "futurePeriod": "months"}, want: "2026-02-28T12:00:00Z"},
		{name: "in a leap year, February 29", now: "2028-01-31T12:00:00Z",
			give: map[string]any{"futureIn": "1", "futurePeriod": "months"}, want: "2028-02-29T12:00:00Z"},
		{name: "thirteen months, into the next year", now: "2026-01-31T12:00:00Z",
			give: map[string]any{"futureIn": "13", "futurePeriod": "months"}, want: "2027-02-28T12:00:00Z"},
		{name: "a month across spring forward keeps the wall clock", now: "2026-03-15T09:00:00Z",
			give: map[string]any{"futureIn": "1", "futurePeriod": "months", "timezone": "Europe/Paris"}, want: "2026-04-15T08:00:00Z", wantTZ: "Europe/Paris"},
		{name: "months at a time of day", now: "2026-11-22T10:00:00Z",
			give: map[string]any{"futureIn": "3", "futurePeriod": "months", "time": "07:05:30", "timezone": "UTC"}, want: "2027-02-22T07:05:30Z"},
		{name: "a time of day skipped by spring forward becomes the time after", now: "2026-03-28T12:00:00Z",
			give: map[string]any{"futureIn": "1", "futurePeriod": "days", "time": "02:30", "timezone": "Europe/Paris"}, want: "2026-03-29T01:30:00Z", wantTZ: "Europe/Paris"},
		{name: "a time of day repeated by fall back is its first, in Paris", now: "2026-10-24T12:00:00Z",
			give: map[string]any{"futureIn": "1", "futurePeriod": "days", "time": "02:30", "timezone": "Europe/Paris"}, want: "2026-10-25T00:30:00Z", wantTZ: "Europe/Paris"},
		{name: "and in New York", now: "2026-10-31T12:00:00Z",
			give: map[string]any{"futureIn": "1", "futurePeriod": "days", "time": "01:30", "timezone": "America/New_York"}, want: "2026-11-01T05:30:00Z", wantTZ: "America/New_York"},
		{name: "a date and time with its offset", now: "2026-11-22T10:00:00Z",
			give: map[string]any{"time": "2026-12-01T08:00:00+01:00", "timezone": "Asia/Tokyo"}, want: "2026-12-01T07:00:00Z", wantTZ: "Asia/Tokyo"},
		{name: "a date and time without an offset is the zone's", now: "2026-11-22T10:00:00Z",
			give: map[string]any{"time": "2026-12-01T08:00", "timezone": "America/New_York"}, want: "2026-12-01T13:00:00Z", wantTZ: "America/New_York"},
		{name: "with a space and seconds, in summer time", now: "2026-11-22T10:00:00Z",
			give: map[string]any{"time": "2027-07-01 08:00:00", "timezone": "Europe/Paris"}, want: "2027-07-01T06:00:00Z", wantTZ: "Europe/Paris"},
		{name: "a date alone is its midnight in the zone", now: "2026-11-22T10:00:00Z",
			give: map[string]any{"time": "2026-12-25", "timezone": "Europe/Paris"}, want: "2026-12-24T23:00:00Z", wantTZ: "Europe/Paris"},
		{name: "a time of day alone, passed today: tomorrow", now: "2026-11-22T10:00:00Z",
			give: map[string]any{"time": "09:00"}, want: "2026-11-23T09:00:00Z"},
		{name: "a time of day alone, still ahead today", now: "2026-11-22T10:00:00Z",
			give: map[string]any{"time": "11:15", "timezone": "UTC"}, want: "2026-11-22T11:15:00Z"},
		{name: "to the millisecond", now: "2026-11-22T10:00:00.123456789Z",
			give: map[string]any{"futureIn": "5", "futurePeriod": "minutes"}, want: "2026-11-22T10:05:00.123Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, tz, err := FireTime(tt.give, utc(tt.now))
			require.NoError(t, err)
			assert.Equal(t, utc(tt.want), got, "%s", got)
			assert.Equal(t, time.UTC, got.Location())
			if tt.wantTZ == "" {
				tt.wantTZ = "UTC"
			}
			assert.Equal(t, tt.wantTZ, tz)
		})
	}
}

// Params that say no time, or two, or one too far, are refused, saying why.
func TestFireTimeRefused(t *testing.T) {
	t.Parallel()
	now := utc("2026-11-22T10:00:00Z")
	tests := []struct {
		name string
		give map[string]any
		want string
	}{
		{"nothing", map[string]any{}, "give params 'futureIn' and 'futurePeriod'"},
		{"no period", map[string]any{"futureIn": "2"}, "param 'futurePeriod' must say"},
		{"a period of years", map[string]any{"futureIn": "2", "futurePeriod": "years"}, `must be minutes, hours, days, weeks or months, got "years"`},
		{"zero", map[string]any{"futureIn": 0.0, "futurePeriod": "days"}, "whole number of periods from 1"},
		{"negative", map[string]any{"futureIn": "-1", "futurePeriod": "days"}, "whole number of periods from 1"},
		{"a fraction", map[string]any{"futureIn": "1.5", "futurePeriod": "days"}, "whole number of periods from 1"},
		{"not a number", map[string]any{"futureIn": "soon", "futurePeriod": "days"}, `got "soon"`},
		{"both ways", map[string]any{"futureIn": "1", "futurePeriod": "days", "time": "2026-12-01T08:00:00Z"}, "not both"},
		{"not a time", map[string]any{"time": "tomorrow"}, `got "tomorrow"`},
		{"not a time of day", map[string]any{"futureIn": "1", "futurePeriod": "days", "time": "25:00"}, `time of day (HH:mm)`},
		{"not a zone", map[string]any{"futureIn": "1", "futurePeriod": "days", "timezone": "Mars/Olympus"}, "IANA time zone"},
		{"this process's zone", map[string]any{"futureIn": "1", "futurePeriod": "days", "timezone": "Local"}, "IANA time zone"},
		{"eleven years", map[string]any{"futureIn": "132", "futurePeriod": "months"}, "more than 10 years ahead"},
		{"hours past any duration", map[string]any{"futureIn": "99999999", "futurePeriod": "hours"}, "more than 10 years ahead"},
		{"past any sum", map[string]any{"futureIn": "1e300", "futurePeriod": "minutes"}, "more than 10 years ahead"},
		{"a date too far", map[string]any{"time": "2999-01-01T00:00:00Z"}, "more than 10 years ahead"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := FireTime(tt.give, now)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// What a task asks for besides its time: the workflow of its team however it is named,
// and the scheduled run's params and labels in every form a designer sends them.
func TestScheduledRunOf(t *testing.T) {
	t.Parallel()
	now := utc("2026-11-22T10:00:00Z")
	when := map[string]any{"futureIn": "1", "futurePeriod": "hours"}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range when {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name       string
		give       map[string]any
		secret     []string
		want       ScheduledRun
		wantErr    string
		wantSecret []string
	}{
		{name: "by name", give: with(map[string]any{"workflowRef": "nightly"}), want: ScheduledRun{Workflow: "nightly"}},
		{name: "as team/name", give: with(map[string]any{"workflowRef": "ops/nightly"}), want: ScheduledRun{Workflow: "nightly"}},
		{name: "by id", give: with(map[string]any{"workflowRef": workflowid.Of("ops", "nightly")}), want: ScheduledRun{Workflow: "nightly"}},
		{name: "by v4's workflowId", give: with(map[string]any{"workflowId": "nightly"}), want: ScheduledRun{Workflow: "nightly"}},
		{name: "none", give: with(nil), wantErr: "param 'workflowRef' must name a workflow"},
		{name: "of another team", give: with(map[string]any{"workflowRef": "dev/nightly"}), wantErr: "only schedule workflows of team 'ops'"},
		{name: "another team's id", give: with(map[string]any{"workflowRef": workflowid.Of("dev", "nightly")}), wantErr: "only schedule workflows of team 'ops'"},
		{name: "params as an object, over the task's other params, as v4 passed them",
			give: with(map[string]any{"workflowRef": "nightly", "env": "dev", "who": "ada", "params": map[string]any{"env": "prod", "n": 2.0}}),
			want: ScheduledRun{Workflow: "nightly", Params: map[string]any{"env": "prod", "who": "ada", "n": 2.0}}},
		{name: "params as a list, labels as an object",
			give: with(map[string]any{"workflowRef": "nightly", "params": []any{map[string]any{"name": "env", "value": "prod"}},
				"labels": map[string]any{"from": "release", "n": 1.0}}),
			want: ScheduledRun{Workflow: "nightly", Params: map[string]any{"env": "prod"}, Labels: map[string]string{"from": "release", "n": "1"}}},
		{name: "params and labels as JSON text, v4's key for name",
			give: with(map[string]any{"workflowRef": "nightly", "params": `{"env":"prod"}`, "labels": `[{"key":"from","value":"release"}]`}),
			want: ScheduledRun{Workflow: "nightly", Params: map[string]any{"env": "prod"}, Labels: map[string]string{"from": "release"}}},
		{name: "empty params", give: with(map[string]any{"workflowRef": "nightly", "params": "", "labels": nil}),
			want: ScheduledRun{Workflow: "nightly"}},
		{name: "params that are neither", give: with(map[string]any{"workflowRef": "nightly", "params": "env=prod"}),
			wantErr: "param 'params' must be an object of names to values or a list of {name, value}"},
		{name: "a label key no run may have", give: with(map[string]any{"workflowRef": "nightly", "labels": map[string]any{"$where": "x"}}),
			wantErr: "param 'labels': label key \"$where\" must not start with '$'"},
		{name: "a list item without a name", give: with(map[string]any{"workflowRef": "nightly", "labels": []any{map[string]any{"value": "x"}}}),
			wantErr: "param 'labels' must be"},
		{name: "secrets: each other param by its name, every one of params when it came from one",
			give:   with(map[string]any{"workflowRef": "nightly", "token": "s3cret", "who": "ada", "params": map[string]any{"key": "k", "who": "bob"}}),
			secret: []string{"params", "token"},
			want: ScheduledRun{Workflow: "nightly", Params: map[string]any{"token": "s3cret", "who": "bob", "key": "k"},
				Secret: []string{"key", "token", "who"}}},
		{name: "a secret other param overridden by params is not one",
			give:   with(map[string]any{"workflowRef": "nightly", "token": "s3cret", "params": map[string]any{"token": "plain"}}),
			secret: []string{"token"}, want: ScheduledRun{Workflow: "nightly", Params: map[string]any{"token": "plain"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ScheduledRunOf("ops", tt.give, tt.secret, now)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.want.At, tt.want.Timezone = now.Add(time.Hour), "UTC"
			assert.Equal(t, tt.want, got)
		})
	}
}

// scheduled starts a run of team ops whose task "later" is a runscheduledworkflow task
// with params, retried retries times.
func scheduled(t *testing.T, params map[string]any, retries *int) (*State, *Machine) {
	t.Helper()
	later := task("later", tasktype.RunScheduledWorkflow, params, "start")
	later.Retries = retries
	return started(t, &Definition{Team: "ops", Tasks: []TaskDef{
		task("start", tasktype.Start, nil),
		later,
		task("after", tasktype.SetWFProperty, map[string]any{"output": "id", "value": "$(tasks.later.results.scheduleId)"}, "later"),
		task("end", tasktype.End, nil, "after"),
	}}, nil)
}

// A runscheduledworkflow task in the machine: it runs and asks for its schedule, ends
// invalid on params that say none, succeeds with the schedule's id for the tasks after
// it, and asks again after a growing delay while the schedules service cannot be reached,
// until its timeout.
func TestMachineScheduledRun(t *testing.T) {
	t.Parallel()
	t.Run("asks, then succeeds with the schedule", func(t *testing.T) {
		t.Parallel()
		s, m := scheduled(t, map[string]any{"workflowRef": "nightly", "futureIn": "1", "futurePeriod": "minutes"}, nil)
		later := s.Tasks[1]
		assert.Equal(t, Running, later.Status)
		assert.Equal(t, []int{1}, m.Effects().Schedule)
		assert.Equal(t, t0.Add(10*time.Minute), later.Deadline, "the team's default task timeout")
		sr, err := m.ScheduledRun(1)
		require.NoError(t, err)
		assert.Equal(t, ScheduledRun{Workflow: "nightly", At: t0.Add(time.Minute), Timezone: "UTC"}, sr)

		m = NewMachine(s, t0.Add(time.Second))
		assert.False(t, m.Scheduled(1, 2, "s1", ""), "another attempt's schedule")
		require.True(t, m.Scheduled(1, 1, "s1", ""))
		assert.Equal(t, "start=succeeded later=succeeded after=succeeded end=succeeded", statuses(s))
		assert.Equal(t, map[string]string{"scheduleId": "s1"}, later.Results)
		assert.Equal(t, "s1", s.Run.Results["id"])
		assert.Equal(t, Succeeded, s.Run.Status)
		assert.False(t, NewMachine(s, t0.Add(2*time.Second)).Scheduled(1, 1, "s2", ""), "once")
	})
	t.Run("invalid params", func(t *testing.T) {
		t.Parallel()
		for name, params := range map[string]map[string]any{
			"no workflow":    {"futureIn": "1", "futurePeriod": "days"},
			"no time":        {"workflowRef": "nightly"},
			"in the past":    {"workflowRef": "nightly", "time": t0.Add(-time.Second).Format(time.RFC3339)},
			"right now":      {"workflowRef": "nightly", "time": t0.Format(time.RFC3339)},
			"another team's": {"workflowRef": "dev/nightly", "futureIn": "1", "futurePeriod": "days"},
		} {
			s, m := scheduled(t, params, nil)
			assert.Equal(t, Invalid, s.Tasks[1].Status, name)
			assert.NotEmpty(t, s.Tasks[1].StatusMessage, name)
			assert.Empty(t, m.Effects().Schedule, name)
			assert.Equal(t, Failed, s.Run.Status, name)
		}
	})
	t.Run("unreachable: asks again later, then times out", func(t *testing.T) {
		t.Parallel()
		s, _ := scheduled(t, map[string]any{"workflowRef": "nightly", "futureIn": "1", "futurePeriod": "days"}, nil)
		later := s.Tasks[1]
		at := t0
		var delays []time.Duration
		for range 100 {
			m := NewMachine(s, at)
			require.True(t, m.ScheduleDelayed(1, 1, "connection refused"))
			assert.False(t, NewMachine(s, at).ScheduleDelayed(1, 1, "again"), "already waiting to ask again")
			assert.Contains(t, later.StatusMessage, "cannot reach the schedules service (connection refused)")
			assert.Equal(t, Running, later.Status)
			assert.Equal(t, later.WakeAt, m.NextWake(0))
			delays = append(delays, later.WakeAt.Sub(at))
			at = later.WakeAt
			m = NewMachine(s, at.Add(-time.Millisecond))
			m.Tick(0)
			assert.Empty(t, m.Effects().Schedule, "not before its delay")
			m = NewMachine(s, at)
			m.Tick(0)
			if later.Status != Running {
				break
			}
			assert.Equal(t, []int{1}, m.Effects().Schedule, "asked again")
			assert.True(t, later.WakeAt.IsZero())
		}
		assert.Equal(t, []time.Duration{time.Second, time.Second, time.Second, 1500 * time.Millisecond, 2250 * time.Millisecond,
			3375 * time.Millisecond}, delays[:6], "from 1 s, half the time spent trying")
		for _, d := range delays {
			assert.LessOrEqual(t, d, time.Minute)
		}
		assert.Equal(t, TimedOut, later.Status, "the task's timeout ends it")
		assert.Contains(t, later.StatusMessage, "exceeded its timeout of 10 minutes; cannot reach the schedules service")
		assert.Equal(t, Failed, s.Run.Status)
	})
	t.Run("recovered: asked again unless waiting to", func(t *testing.T) {
		t.Parallel()
		s, _ := scheduled(t, map[string]any{"workflowRef": "nightly", "futureIn": "1", "futurePeriod": "days"}, nil)
		m := NewMachine(s, t0)
		m.Recover()
		assert.Equal(t, []int{1}, m.Effects().Schedule)
		require.True(t, NewMachine(s, t0).ScheduleDelayed(1, 1, "down"))
		m = NewMachine(s, t0)
		m.Recover()
		assert.Empty(t, m.Effects().Schedule, "its timer asks")
	})
	t.Run("retries: a new attempt asks again", func(t *testing.T) {
		t.Parallel()
		one := 1
		s, _ := scheduled(t, map[string]any{"workflowRef": "nightly", "futureIn": "1", "futurePeriod": "days"}, &one)
		later := s.Tasks[1]
		m := NewMachine(s, later.Deadline)
		m.Tick(0)
		require.Equal(t, Waiting, later.Status, "%s", later.StatusMessage)
		m = NewMachine(s, later.WakeAt)
		m.Tick(0)
		assert.Equal(t, Running, later.Status)
		assert.Equal(t, 2, later.Attempt)
		assert.Equal(t, []int{1}, m.Effects().Schedule)
		assert.True(t, m.Scheduled(1, 2, "s1", ""))
		assert.True(t, strings.HasPrefix(statuses(s), "start=succeeded later=succeeded"))
	})
}

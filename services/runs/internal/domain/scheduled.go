package domain

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	libnames "github.com/baton-flow/baton/libs/names"
	"github.com/baton-flow/baton/libs/param"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/libs/workflowid"
)

// A runscheduledworkflow task asks the schedules service for a runOnce schedule of a
// workflow of its run's team, and succeeds with the schedule's id as its result
// ScheduleIDResult. While it asks it is running; a schedules service that cannot be
// reached is asked again after a delay (ScheduleDelayed) until the task's timeout, the
// delay growing with the time the task has been trying. What it asks is read from its
// params by ScheduledRunOf.

// ScheduleIDResult names the result that holds the schedule a runscheduledworkflow task
// made.
const ScheduleIDResult = "scheduleId"

// MaxScheduleAhead bounds how far ahead a runscheduledworkflow task may schedule a run, in
// years.
const MaxScheduleAhead = 10

// Periods a runscheduledworkflow task's futureIn counts.
const (
	PeriodMinutes = "minutes"
	PeriodHours   = "hours"
	PeriodDays    = "days"
	PeriodWeeks   = "weeks"
	PeriodMonths  = "months"
)

// scheduleParams are the params a runscheduledworkflow task reads itself. Any other it is
// given is a param of the run it schedules, as v4 took them.
var scheduleParams = []string{"workflowRef", "workflowId", "futureIn", "futurePeriod", "time", "timezone", "params", "labels"}

// ScheduledRun is the runOnce schedule a runscheduledworkflow task asks for.
type ScheduledRun struct {
	// Workflow is the workflow's name in the run's team.
	Workflow string
	// At is when the run is due, in UTC; Timezone is the IANA zone the task read its
	// times in, which the schedule is shown in.
	At       time.Time
	Timezone string
	// Params are the scheduled run's values by name; Secret names those that came from a
	// secret.
	Params map[string]any
	Secret []string
	Labels map[string]string
}

// ScheduledRunOf reads what a runscheduledworkflow task of team's run asks for from its
// resolved params, values, of which secret came from a secret, at now:
//
//   - `workflowRef` (alias `workflowId`, v4's): the workflow's name, `<team>/<name>` or its
//     id, of the same team;
//   - when: `futureIn` whole `futurePeriod`s (minutes, hours, days, weeks or months) from
//     now — days and longer by the calendar of `timezone`, at `time` of day (HH:mm) there
//     when given, else at now's time of day there; or `time` alone: a date and time (RFC
//     3339; without an offset, a wall clock time in `timezone`), or a time of day, its next
//     occurrence in `timezone`. `timezone` is an IANA zone, UTC when empty;
//   - `params`: the run's values, an object of names to values or a list of {name, value}
//     (or either as JSON text), over any other param the task is given;
//   - `labels`: the schedule's labels, likewise.
//
// At is not checked against now: a time in the past is the caller's to refuse.
func ScheduledRunOf(team string, values map[string]any, secret []string, now time.Time) (ScheduledRun, error) {
	workflow, err := scheduledWorkflow(team, values)
	if err != nil {
		return ScheduledRun{}, err
	}
	at, zone, err := FireTime(values, now)
	if err != nil {
		return ScheduledRun{}, err
	}
	params, paramSecret, err := scheduledParams(values, secret)
	if err != nil {
		return ScheduledRun{}, err
	}
	labels, err := nameValues("labels", values["labels"])
	if err != nil {
		return ScheduledRun{}, err
	}
	var lbl map[string]string
	if len(labels) > 0 {
		lbl = make(map[string]string, len(labels))
		for k, v := range labels {
			lbl[k] = Text(v)
		}
	}
	// The schedule's labels become its runs': a key no run may have is refused here.
	for _, k := range slices.Sorted(maps.Keys(lbl)) {
		if err := libnames.CheckLabelKey(k); err != nil {
			return ScheduledRun{}, fmt.Errorf("param 'labels': %v", err)
		}
	}
	return ScheduledRun{Workflow: workflow, At: at, Timezone: zone, Params: params, Secret: paramSecret, Labels: lbl}, nil
}

// scheduledWorkflow is the name of the workflow a runscheduledworkflow task names, which
// must be of team.
func scheduledWorkflow(team string, values map[string]any) (string, error) {
	ref := strings.TrimSpace(Text(values["workflowRef"]))
	if ref == "" {
		ref = strings.TrimSpace(Text(values["workflowId"]))
	}
	if ref == "" {
		return "", fmt.Errorf("param 'workflowRef' must name a workflow of the team")
	}
	if t, name, ok := workflowid.Parse(ref); ok {
		ref = t + "/" + name // a workflow's id names its team too
	}
	if t, name, ok := strings.Cut(ref, "/"); ok {
		if t != team || name == "" {
			return "", fmt.Errorf("runscheduledworkflow may only schedule workflows of team '%s', not '%s'", team, ref)
		}
		ref = name
	}
	return ref, nil
}

// scheduledParams are the scheduled run's params: the task's params it does not read
// itself, then those of `params` over them; and the names of those that came from a
// secret (every one of `params` when it did: which of them is not kept).
func scheduledParams(values map[string]any, secret []string) (map[string]any, []string, error) {
	out := map[string]any{}
	var outSecret []string
	for name, v := range values {
		if !slices.Contains(scheduleParams, name) {
			out[name] = v
			if slices.Contains(secret, name) {
				outSecret = append(outSecret, name)
			}
		}
	}
	given, err := nameValues("params", values["params"])
	if err != nil {
		return nil, nil, err
	}
	for name, v := range given {
		out[name] = v
		outSecret = slices.DeleteFunc(outSecret, func(n string) bool { return n == name })
		if slices.Contains(secret, "params") {
			outSecret = append(outSecret, name)
		}
	}
	if len(out) == 0 {
		return nil, nil, nil
	}
	if len(outSecret) == 0 {
		return out, nil, nil
	}
	slices.Sort(outSecret)
	return out, outSecret, nil
}

// nameValues reads param field's values: an object of names to values, a list of {name,
// value}, or either as JSON text; nothing is none.
func nameValues(field string, v any) (map[string]any, error) {
	if s, ok := v.(string); ok {
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		// A designer's text box holds JSON text.
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, fmt.Errorf("param '%s' must be an object of names to values or a list of {name, value}, not %q", field, s)
		}
	}
	if list, ok := v.([]any); ok {
		// v4 named a list's items by key as often as by name.
		named := make([]any, len(list))
		for i, item := range list {
			if kv, ok := item.(map[string]any); ok && kv["name"] == nil && kv["key"] != nil {
				kv = maps.Clone(kv)
				kv["name"] = kv["key"]
				item = kv
			}
			named[i] = item
		}
		v = named
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("param '%s': %v", field, err)
	}
	m, err := param.DecodeValues(raw)
	if err != nil {
		return nil, fmt.Errorf("param '%s' must be an object of names to values or a list of {name, value}: %v", field, err)
	}
	return m, nil
}

// FireTime is when a runscheduledworkflow task whose resolved params are values, begun at
// now, asks its run to be due (see ScheduledRunOf), in UTC to the millisecond, and the
// zone it read its times in.
func FireTime(values map[string]any, now time.Time) (time.Time, string, error) {
	zone := strings.TrimSpace(Text(values["timezone"]))
	if zone == "" {
		zone = "UTC"
	}
	loc, err := loadZone(zone)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("param 'timezone' must be an IANA time zone such as Europe/Paris, got %q", zone)
	}
	in := strings.TrimSpace(Text(values["futureIn"]))
	period := strings.ToLower(strings.TrimSpace(Text(values["futurePeriod"])))
	clock := strings.TrimSpace(Text(values["time"]))
	date, isDate := dateTime(clock, loc)
	var at time.Time
	switch {
	case in == "" && clock == "":
		return time.Time{}, "", fmt.Errorf("give params 'futureIn' and 'futurePeriod' (minutes, hours, days, weeks or months), " +
			"or 'time' (a date and time such as 2026-03-14T15:00:00Z)")
	case in == "" && isDate:
		at = date
	case in == "":
		h, m, s, ok := timeOfDay(clock)
		if !ok {
			return time.Time{}, "", fmt.Errorf("param 'time' must be a date and time (RFC 3339, such as 2026-03-14T15:00:00Z) "+
				"or a time of day (HH:mm), got %q", clock)
		}
		y, mo, d := now.In(loc).Date()
		if at = wallClock(y, mo, d, h, m, s, 0, loc); !at.After(now) {
			at = wallClock(y, mo, d+1, h, m, s, 0, loc)
		}
	case isDate:
		return time.Time{}, "", fmt.Errorf("give either params 'futureIn' and 'futurePeriod' or 'time' as a date and time, not both")
	default:
		if at, err = later(in, period, clock, now, loc); err != nil {
			return time.Time{}, "", err
		}
	}
	if at.After(now.AddDate(MaxScheduleAhead, 0, 0)) {
		return time.Time{}, "", fmt.Errorf("the run would be due %s, more than %d years ahead", at.UTC().Format(time.RFC3339), MaxScheduleAhead)
	}
	return at.UTC().Truncate(time.Millisecond), zone, nil
}

// maxFutureIn bounds futureIn before any sum: far more than MaxScheduleAhead in minutes.
const maxFutureIn = 100_000_000

// later is futureIn whole periods after now: minutes and hours as durations, days and
// longer by loc's calendar (a day is a date, however long daylight saving makes it), at
// the time of day clock there when given (HH:mm, as v4 read it), else at now's.
func later(futureIn, period, clock string, now time.Time, loc *time.Location) (time.Time, error) {
	f, err := strconv.ParseFloat(futureIn, 64)
	if err != nil || f != math.Trunc(f) || f < 1 {
		return time.Time{}, fmt.Errorf("param 'futureIn' must be a whole number of periods from 1, got %q", futureIn)
	}
	if f > maxFutureIn {
		return time.Time{}, fmt.Errorf("param 'futureIn' schedules the run more than %d years ahead", MaxScheduleAhead)
	}
	n := int(f)
	switch period {
	case PeriodMinutes, PeriodHours:
		unit := time.Minute
		if period == PeriodHours {
			unit = time.Hour
		}
		if n > int(time.Duration(1<<62)/unit) {
			return time.Time{}, fmt.Errorf("param 'futureIn' schedules the run more than %d years ahead", MaxScheduleAhead)
		}
		// A time of day means nothing for these periods; v4 ignored it too.
		return now.Add(time.Duration(n) * unit), nil
	case PeriodDays, PeriodWeeks, PeriodMonths:
	case "":
		return time.Time{}, fmt.Errorf("param 'futurePeriod' must say what 'futureIn' counts: minutes, hours, days, weeks or months")
	default:
		return time.Time{}, fmt.Errorf("param 'futurePeriod' must be minutes, hours, days, weeks or months, got %q", period)
	}
	local := now.In(loc)
	y, mo, d := local.Date()
	h, m, s := local.Clock()
	ns := local.Nanosecond()
	if clock != "" {
		var ok bool
		if h, m, s, ok = timeOfDay(clock); !ok {
			return time.Time{}, fmt.Errorf("param 'time' must be a time of day (HH:mm) with a period of days or longer, got %q", clock)
		}
		ns = 0
	}
	switch period {
	case PeriodDays:
		d += n
	case PeriodWeeks:
		d += 7 * n
	case PeriodMonths:
		// By the calendar, the day kept where the month has it, else its last day: a month
		// after January 31 is the end of February, not early March.
		first := time.Date(y, mo+time.Month(n), 1, 0, 0, 0, 0, time.UTC)
		y, mo, d = first.Year(), first.Month(), min(d, first.AddDate(0, 1, -1).Day())
	}
	return wallClock(y, mo, d, h, m, s, ns, loc), nil
}

// wallClock is the instant loc's clocks show the date and time given. A time that daylight
// saving skips that day is taken as the instant it becomes (02:30 where clocks go from
// 02:00 to 03:00 is 03:30); one it repeats is the first of the two, whatever the zone.
func wallClock(y int, mo time.Month, d, h, m, s, ns int, loc *time.Location) time.Time {
	t := time.Date(y, mo, d, h, m, s, ns, loc)
	want := time.Date(y, mo, d, h, m, s, ns, time.UTC)
	for _, back := range []time.Duration{3 * time.Hour, 2 * time.Hour, time.Hour, 30 * time.Minute} {
		earlier := t.Add(-back).In(loc)
		ey, emo, ed := earlier.Date()
		eh, em, es := earlier.Clock()
		if time.Date(ey, emo, ed, eh, em, es, earlier.Nanosecond(), time.UTC).Equal(want) {
			return earlier
		}
	}
	return t
}

// dateTime reads s as a date and time: RFC 3339, or without an offset (a wall clock time
// in loc) to the minute or finer, or a date alone (its midnight in loc).
func dateTime(s string, loc *time.Location) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04:05.999999999",
		"2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			y, mo, d := t.Date()
			h, m, sec := t.Clock()
			return wallClock(y, mo, d, h, m, sec, t.Nanosecond(), loc), true
		}
	}
	return time.Time{}, false
}

// timeOfDay reads s as HH:mm or HH:mm:ss.
func timeOfDay(s string) (h, m, sec int, ok bool) {
	for _, layout := range []string{"15:04", "15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Hour(), t.Minute(), t.Second(), true
		}
	}
	return 0, 0, 0, false
}

// loadZone loads an IANA zone by name; Local, this process's zone, is not one.
func loadZone(name string) (*time.Location, error) {
	if name == "Local" || len(name) > 64 || strings.ContainsRune(name, 0) {
		return nil, fmt.Errorf("not a zone: %q", name)
	}
	return time.LoadLocation(name)
}

// ScheduledRun is what runscheduledworkflow task i asks for now (ScheduledRunOf), from the
// params it began with.
func (m *Machine) ScheduledRun(i int) (ScheduledRun, error) {
	t := m.S.Tasks[i]
	return ScheduledRunOf(m.S.Run.Team, t.Params, t.SecretParams, m.Now)
}

// beginScheduled starts runscheduledworkflow task v, its params resolved as values: it runs
// while its schedule is being made, or ends invalid when its params say no schedule.
func (m *Machine) beginScheduled(v int, values map[string]any, secret []string) {
	t := m.S.Tasks[v]
	sr, err := ScheduledRunOf(m.S.Run.Team, values, secret, m.Now)
	if err == nil && !sr.At.After(m.Now) {
		err = fmt.Errorf("param 'time' is in the past: %s", sr.At.Format(time.RFC3339))
	}
	if err != nil {
		m.complete(v, Invalid, err.Error())
		return
	}
	t.Status = Running
	t.Timeout = m.taskTimeout(m.S.G.Tasks[v])
	t.Deadline = m.deadline(t.Timeout)
	m.eff.Schedule = append(m.eff.Schedule, v)
}

// Scheduled ends attempt of runscheduledworkflow task i with the schedule it made, id;
// note, when set, says something of it (its workflow's schedule trigger is off). It
// answers false when the task no longer waits for that attempt's schedule: the run ended
// or the attempt did.
func (m *Machine) Scheduled(i, attempt int, id, note string) bool {
	t := m.S.Tasks[i]
	if t.Status != Running || t.Attempt != attempt || m.S.Run.Phase.Ended() || m.S.G.Tasks[i].Type != tasktype.RunScheduledWorkflow {
		return false
	}
	m.touch(i)
	t.Results = map[string]string{ScheduleIDResult: id}
	m.complete(i, Succeeded, note)
	m.maybeFinish()
	return true
}

// Backoff bounds of a runscheduledworkflow task asking a schedules service it cannot reach.
const (
	minScheduleDelay = time.Second
	maxScheduleDelay = time.Minute
)

// ScheduleDelayed records that attempt of runscheduledworkflow task i could not reach the
// schedules service (why): the task asks again after a delay, half the time it has been
// trying, from 1 s to a minute, and never past its deadline. It answers false when the task
// no longer waits for that attempt's schedule, or already waits to ask again.
func (m *Machine) ScheduleDelayed(i, attempt int, why string) bool {
	t := m.S.Tasks[i]
	if t.Status != Running || t.Attempt != attempt || !t.WakeAt.IsZero() || m.S.Run.Phase.Ended() ||
		m.S.G.Tasks[i].Type != tasktype.RunScheduledWorkflow {
		return false
	}
	m.touch(i)
	delay := min(max(m.Now.Sub(t.StartTime)/2, minScheduleDelay), maxScheduleDelay)
	t.WakeAt = m.Now.Add(delay)
	if !t.Deadline.IsZero() && t.Deadline.Before(t.WakeAt) {
		t.WakeAt = t.Deadline
	}
	t.StatusMessage = m.S.Scrub(fmt.Sprintf("cannot reach the schedules service (%s); trying again in %s", why, t.WakeAt.Sub(m.Now)))
	return true
}

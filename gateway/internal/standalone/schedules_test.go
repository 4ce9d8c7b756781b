package standalone_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validate-cron through the gateway, on the team path and on v4's: a valid expression
// answers its next five fire times in the zone asked, an invalid one valid false with the
// reason, and an unknown zone or no expression a 400.
func TestIntegrationValidateCron(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"ops"}`)
	require.Equal(t, http.StatusCreated, code, out)
	for _, base := range []string{"/api/v2/team/ops/schedule/validate-cron", "/api/v2/schedule/validate-cron"} {
		code, out := b.call(t, http.MethodGet, base+"?cron="+url.QueryEscape("0 9 * * MON-FRI")+"&timezone=Europe/Paris", b.token, "")
		require.Equal(t, http.StatusOK, code, out)
		assert.Equal(t, true, out["valid"])
		dates := out["nextDates"].([]any)
		require.Len(t, dates, 5)
		first, err := time.Parse(time.RFC3339, dates[0].(string))
		require.NoError(t, err)
		paris, err := time.LoadLocation("Europe/Paris")
		require.NoError(t, err)
		assert.Equal(t, 9, first.In(paris).Hour())
		assert.NotEqual(t, time.Saturday, first.In(paris).Weekday())

		code, out = b.call(t, http.MethodGet, base+"?cron="+url.QueryEscape("0 0 L * *"), b.token, "")
		require.Equal(t, http.StatusOK, code, out)
		assert.Equal(t, false, out["valid"])
		assert.Contains(t, out["message"], "L, W and #")

		code, out = b.call(t, http.MethodGet, base+"?cron="+url.QueryEscape("0 9 * * *")+"&timezone=Mars/Olympus", b.token, "")
		assert.Equal(t, http.StatusBadRequest, code, out)
		assert.Equal(t, "SCHEDULE_INVALID_REQ", out["reason"])

		code, out = b.call(t, http.MethodGet, base, b.token, "")
		assert.Equal(t, http.StatusBadRequest, code, out)
	}
	code, out = b.call(t, http.MethodGet, "/api/v2/team/ops/schedule/validate-cron?cron=*+*+*+*+*", "", "")
	assert.Equal(t, http.StatusUnauthorized, code, out)
}

// schedules is a standalone Baton with team ops and its workflow nightly, whose schedule
// trigger is on and which has a password param.
type schedules struct {
	*baton
}

func startSchedules(t *testing.T) *schedules {
	t.Helper()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"ops"}`)
	require.Equal(t, http.StatusCreated, code, out)
	s := &schedules{baton: b}
	s.workflow(t, "nightly", true)
	return s
}

// workflow saves workflow name of team ops, its schedule trigger on or off, once the team
// has reached the workflows service.
func (s *schedules) workflow(t *testing.T, name string, scheduled bool) {
	t.Helper()
	body := fmt.Sprintf(`{"name":%q,"triggers":{"schedule":{"enabled":%t}},
		"params":[{"name":"who","type":"text"},{"name":"token","type":"password"}],
		"tasks":[{"name":"start","type":"start"},{"name":"end","type":"end","dependencies":[{"taskRef":"start"}]}]}`, name, scheduled)
	require.Eventually(t, func() bool {
		code, out := s.call(t, http.MethodPut, "/api/v2/team/ops/workflow", s.token, body)
		require.NotEqual(t, http.StatusBadRequest, code, "%v", out)
		return code == http.StatusOK || code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
}

// create makes a schedule of team ops from body.
func (s *schedules) create(t *testing.T, body string) map[string]any {
	t.Helper()
	code, out := s.call(t, http.MethodPost, "/api/v2/team/ops/schedule", s.token, body)
	require.Equal(t, http.StatusCreated, code, out)
	return out
}

// runs answers the runs of team ops labelled sched=label.
func (s *schedules) runs(t *testing.T, label string) []map[string]any {
	t.Helper()
	var page struct {
		Content []map[string]any `json:"content"`
	}
	code := s.callJSON(t, http.MethodGet, "/api/v2/team/ops/workflowrun/query?limit=1000&labels="+url.QueryEscape("sched="+label), s.token, "", &page)
	require.Equal(t, http.StatusOK, code)
	return page.Content
}

// A schedule through the gateway: created, read with its password param masked, firing
// runs of the workflow with its params and labels, trigger schedule, one per fire; paused,
// searched, archived, and read-only once archived.
func TestIntegrationSchedules(t *testing.T) {
	t.Parallel()
	s := startSchedules(t)
	sch := s.create(t, `{"name":"every second","workflowRef":"nightly","type":"cron","cronSchedule":"* * * * * *","timezone":"UTC",
		"params":[{"name":"who","value":"cron"},{"name":"token","value":"s3cret"}],"labels":{"sched":"fast"}}`)
	id := sch["id"].(string)
	assert.Equal(t, "active", sch["status"])
	assert.Equal(t, false, sch["triggerDisabled"])
	assert.NotEmpty(t, sch["nextScheduleDate"])
	assert.Contains(t, sch["params"], map[string]any{"name": "token", "value": "********"})
	assert.Contains(t, sch["params"], map[string]any{"name": "who", "value": "cron"})

	var fired []map[string]any
	require.Eventually(t, func() bool { fired = s.runs(t, "fast"); return len(fired) >= 2 }, 30*time.Second, 50*time.Millisecond)
	r := fired[0]
	assert.Equal(t, "schedule", r["trigger"])
	assert.Equal(t, "nightly", r["workflowRef"])
	assert.Equal(t, map[string]any{"type": "schedule", "id": id, "name": "every second"}, r["initiatedBy"])
	assert.Contains(t, r["params"], map[string]any{"name": "who", "value": "cron"})
	assert.Contains(t, r["params"], map[string]any{"name": "token", "value": "********"})
	code, got := s.call(t, http.MethodGet, "/api/v2/team/ops/schedule/"+id, s.token, "")
	require.Equal(t, http.StatusOK, code, got)
	assert.NotEmpty(t, got["lastScheduleDate"])

	// Paused: it keeps its next date and fires no more (at most the fire in flight).
	sch["status"] = "inactive"
	code, got = s.call(t, http.MethodPut, "/api/v2/team/ops/schedule", s.token, mustJSON(t, sch))
	require.Equal(t, http.StatusOK, code, got)
	assert.Equal(t, "inactive", got["status"])
	assert.NotEmpty(t, got["nextScheduleDate"])
	paused := len(s.runs(t, "fast"))
	probe := s.create(t, `{"name":"probe","workflowRef":"nightly","cronSchedule":"* * * * * *","timezone":"UTC","labels":{"sched":"probe"}}`)
	require.Eventually(t, func() bool { return len(s.runs(t, "probe")) >= 3 }, 30*time.Second, 50*time.Millisecond)
	assert.LessOrEqual(t, len(s.runs(t, "fast")), paused+1, "a paused schedule fires no more")

	// Search.
	var page struct {
		Content       []map[string]any `json:"content"`
		TotalElements int              `json:"totalElements"`
	}
	code = s.callJSON(t, http.MethodGet, "/api/v2/team/ops/schedule/query?statuses=inactive", s.token, "", &page)
	require.Equal(t, http.StatusOK, code)
	require.Len(t, page.Content, 1)
	assert.Equal(t, id, page.Content[0]["id"])
	code = s.callJSON(t, http.MethodGet, "/api/v2/team/ops/schedule/query?workflows=nightly&types=cron,advancedCron", s.token, "", &page)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, 2, page.TotalElements)
	code = s.callJSON(t, http.MethodGet, "/api/v2/team/ops/schedule/query?types=runOnce", s.token, "", &page)
	require.Equal(t, http.StatusOK, code)
	assert.Empty(t, page.Content)
	code, got = s.call(t, http.MethodGet, "/api/v2/team/ops/schedule/query?statuses=paused", s.token, "")
	assert.Equal(t, http.StatusBadRequest, code, got)
	assert.Equal(t, "QUERY_INVALID_FILTERS", got["reason"])

	// Archived: read-only, fires no more.
	code, _ = s.call(t, http.MethodDelete, "/api/v2/team/ops/schedule/"+probe["id"].(string), s.token, "")
	require.Equal(t, http.StatusNoContent, code)
	code, got = s.call(t, http.MethodGet, "/api/v2/team/ops/schedule/"+probe["id"].(string), s.token, "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "archived", got["status"])
	code, got = s.call(t, http.MethodPut, "/api/v2/team/ops/schedule", s.token, mustJSON(t, got))
	assert.Equal(t, http.StatusBadRequest, code, got)
	assert.Equal(t, "SCHEDULE_INVALID_REQ", got["reason"])

	// Refusals.
	for _, tc := range []struct{ body, reason string }{
		{`{"name":"x","workflowRef":"nightly","cronSchedule":"0 0 L * *","timezone":"UTC"}`, "SCHEDULE_INVALID_CRON"},
		{`{"name":"x","workflowRef":"nightly","cronSchedule":"0 9 * * *","timezone":"Mars/Olympus"}`, "SCHEDULE_INVALID_REQ"},
		{`{"name":"x","workflowRef":"nightly","cronSchedule":"0 9 * * *"}`, "SCHEDULE_INVALID_REQ"},
		{`{"name":"x","workflowRef":"nightly","type":"runOnce","timezone":"UTC"}`, "SCHEDULE_INVALID_RUNONCE"},
		{`{"name":"x","workflowRef":"nightly","type":"runOnce","dateSchedule":"2001-01-01T00:00:00Z","timezone":"UTC"}`, "SCHEDULE_INVALID_RUNONCE"},
		{`{"name":"x","workflowRef":"nightly","cronSchedule":"0 9 * * *","timezone":"UTC","overlapPolicy":"sometimes"}`, "SCHEDULE_INVALID_REQ"},
		{`{"name":"x","workflowRef":"nope","cronSchedule":"0 9 * * *","timezone":"UTC"}`, "WORKFLOW_NOT_FOUND"},
	} {
		code, got := s.call(t, http.MethodPost, "/api/v2/team/ops/schedule", s.token, tc.body)
		assert.Equal(t, tc.reason, got["reason"], "%s: %d %v", tc.body, code, got)
	}
	code, got = s.call(t, http.MethodGet, "/api/v2/team/ops/schedule/nope", s.token, "")
	assert.Equal(t, http.StatusNotFound, code, got)
}

// Calendars list every planned fire of a window, whatever the schedule's state, within
// the bounds; a backfill makes one run per fire time of a past window under the live
// fires' keys, so doing it again makes none.
func TestIntegrationScheduleCalendarsAndBackfill(t *testing.T) {
	t.Parallel()
	s := startSchedules(t)
	hourly := s.create(t, `{"name":"hourly","workflowRef":"nightly","cronSchedule":"0 * * * *","timezone":"Europe/Paris","labels":{"sched":"hourly"}}`)
	id := hourly["id"].(string)
	from := time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC) // Europe/Paris moves to summer time at 01:00 UTC
	to := from.Add(5 * time.Hour)
	var cals []map[string]any
	q := fmt.Sprintf("?schedules=%s&fromDate=%d&toDate=%d", id, from.UnixMilli(), to.UnixMilli())
	code := s.callJSON(t, http.MethodGet, "/api/v2/team/ops/schedule/calendars"+q, s.token, "", &cals)
	require.Equal(t, http.StatusOK, code, cals)
	require.Len(t, cals, 1)
	assert.Equal(t, id, cals[0]["scheduleId"])
	assert.Equal(t, []any{"2026-03-29T00:00:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-29T02:00:00.000Z",
		"2026-03-29T03:00:00.000Z", "2026-03-29T04:00:00.000Z", "2026-03-29T05:00:00.000Z"}, cals[0]["dates"])

	for name, query := range map[string]string{
		"no window":      "?schedules=" + id,
		"over 366 days":  fmt.Sprintf("?schedules=%s&fromDate=%d&toDate=%d", id, from.UnixMilli(), from.AddDate(1, 1, 0).UnixMilli()),
		"backwards":      fmt.Sprintf("?schedules=%s&fromDate=%d&toDate=%d", id, to.UnixMilli(), from.UnixMilli()),
		"not a number":   "?schedules=" + id + "&fromDate=soon&toDate=later",
		"no schedules":   fmt.Sprintf("?fromDate=%d&toDate=%d", from.UnixMilli(), to.UnixMilli()),
		"negative epoch": fmt.Sprintf("?schedules=%s&fromDate=-5&toDate=%d", id, to.UnixMilli()),
	} {
		var e map[string]any
		code := s.callJSON(t, http.MethodGet, "/api/v2/team/ops/schedule/calendars"+query, s.token, "", &e)
		assert.Equal(t, http.StatusBadRequest, code, "%s: %v", name, e)
	}
	code = s.callJSON(t, http.MethodGet, fmt.Sprintf("/api/v2/team/ops/schedule/calendars?schedules=%s,nope&fromDate=%d&toDate=%d",
		id, from.UnixMilli(), to.UnixMilli()), s.token, "", &map[string]any{})
	assert.Equal(t, http.StatusNotFound, code)

	// A schedule of another team is not found.
	code, out := s.call(t, http.MethodPost, "/api/v2/team", s.token, `{"name":"dev"}`)
	require.Equal(t, http.StatusCreated, code, out)
	code = s.callJSON(t, http.MethodGet, "/api/v2/team/dev/schedule/calendars"+q, s.token, "", &map[string]any{})
	assert.Equal(t, http.StatusNotFound, code)
	code, out = s.call(t, http.MethodGet, "/api/v2/team/dev/schedule/"+id, s.token, "")
	assert.Equal(t, http.StatusNotFound, code, out)

	// Backfill the last five whole hours, twice: five runs.
	end := time.Now().UTC().Truncate(time.Hour)
	body := fmt.Sprintf(`{"fromDate":%d,"toDate":%q}`, end.Add(-4*time.Hour).UnixMilli(), end.Format(time.RFC3339))
	code, out = s.call(t, http.MethodPost, "/api/v2/team/ops/schedule/"+id+"/backfill", s.token, body)
	require.Equal(t, http.StatusOK, code, out)
	assert.Equal(t, map[string]any{"runs": 5.0, "created": 5.0}, out)
	code, out = s.call(t, http.MethodPost, "/api/v2/team/ops/schedule/"+id+"/backfill", s.token, body)
	require.Equal(t, http.StatusOK, code, out)
	assert.Equal(t, map[string]any{"runs": 5.0, "created": 0.0}, out, "the same window again: no run made twice")
	runs := s.runs(t, "hourly")
	assert.Len(t, runs, 5)
	for _, r := range runs {
		assert.Equal(t, "schedule", r["trigger"])
	}
	for name, body := range map[string]string{
		"in the future": fmt.Sprintf(`{"fromDate":%d,"toDate":%d}`, end.UnixMilli(), end.Add(48*time.Hour).UnixMilli()),
		"no window":     `{}`,
		"too long":      fmt.Sprintf(`{"fromDate":%d,"toDate":%d}`, end.AddDate(-2, 0, 0).UnixMilli(), end.UnixMilli()),
		"not a date":    `{"fromDate":"yesterday","toDate":"today"}`,
		"overflow":      `{"fromDate":1e400,"toDate":99999999999999999999999}`,
		"over 1,000":    fmt.Sprintf(`{"fromDate":%d,"toDate":%d}`, end.AddDate(0, -2, 0).UnixMilli(), end.UnixMilli()),
	} {
		code, out := s.call(t, http.MethodPost, "/api/v2/team/ops/schedule/"+id+"/backfill", s.token, body)
		assert.Equal(t, http.StatusBadRequest, code, "%s: %v", name, out)
	}
}

// A runOnce schedule fires once at its date and is completed; a workflow whose schedule
// trigger is turned off keeps its schedules, which say so and do not fire; a deleted
// workflow's schedules are archived.
func TestIntegrationScheduleLifecycle(t *testing.T) {
	t.Parallel()
	s := startSchedules(t)
	at := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	once := s.create(t, fmt.Sprintf(`{"name":"once","workflowRef":"nightly","type":"runOnce","dateSchedule":%q,"timezone":"UTC","labels":{"sched":"once"}}`,
		at.Format(time.RFC3339)))
	require.Eventually(t, func() bool {
		_, got := s.call(t, http.MethodGet, "/api/v2/team/ops/schedule/"+once["id"].(string), s.token, "")
		return got["status"] == "completed"
	}, 30*time.Second, 50*time.Millisecond)
	assert.Len(t, s.runs(t, "once"), 1)

	// Trigger off: kept, marked, not firing; back on: firing again.
	s.workflow(t, "nightly", false)
	fast := s.create(t, `{"name":"fast","workflowRef":"nightly","cronSchedule":"* * * * * *","timezone":"UTC","labels":{"sched":"off"}}`)
	assert.Equal(t, true, fast["triggerDisabled"], "created while the trigger is off")
	s.workflow(t, "probe", true)
	probe := s.create(t, `{"name":"probe","workflowRef":"probe","cronSchedule":"* * * * * *","timezone":"UTC","labels":{"sched":"probe"}}`)
	require.Eventually(t, func() bool { return len(s.runs(t, "probe")) >= 3 }, 30*time.Second, 50*time.Millisecond)
	assert.Empty(t, s.runs(t, "off"), "its workflow's schedule trigger is off")
	s.workflow(t, "nightly", true)
	require.Eventually(t, func() bool {
		_, got := s.call(t, http.MethodGet, "/api/v2/team/ops/schedule/"+fast["id"].(string), s.token, "")
		return got["triggerDisabled"] == false
	}, 30*time.Second, 50*time.Millisecond)
	require.Eventually(t, func() bool { return len(s.runs(t, "off")) >= 1 }, 30*time.Second, 50*time.Millisecond)

	// The workflow deleted: its schedules archived, the other workflow's kept.
	code, out := s.call(t, http.MethodDelete, "/api/v2/team/ops/workflow/nightly?force=true", s.token, "")
	require.Equal(t, http.StatusNoContent, code, out)
	require.Eventually(t, func() bool {
		_, got := s.call(t, http.MethodGet, "/api/v2/team/ops/schedule/"+fast["id"].(string), s.token, "")
		return got["status"] == "archived"
	}, 30*time.Second, 50*time.Millisecond)
	_, got := s.call(t, http.MethodGet, "/api/v2/team/ops/schedule/"+probe["id"].(string), s.token, "")
	assert.Equal(t, "active", got["status"])
	_, got = s.call(t, http.MethodGet, "/api/v2/team/ops/schedule/"+once["id"].(string), s.token, "")
	assert.Equal(t, "archived", got["status"])
}

// Every principal is held to the schedule rules: a workflow's token reaches its workflow's
// schedules only, and may schedule only what it may run; a team's token stays in its team.
func TestIntegrationScheduleTokens(t *testing.T) {
	t.Parallel()
	s := startSchedules(t)
	s.workflow(t, "other", true)
	mint := func(body string) string {
		t.Helper()
		code, out := s.call(t, http.MethodPost, "/api/v2/token", s.token, body)
		require.Equal(t, http.StatusCreated, code, out)
		return out["token"].(string)
	}
	own := mint(`{"type":"workflow","principal":"ops/nightly","permissions":["schedule/write","schedule/read","schedule/delete","workflowrun/write"]}`)
	noRuns := mint(`{"type":"workflow","principal":"ops/nightly","permissions":["schedule/write","schedule/read"]}`)
	code, out := s.call(t, http.MethodPost, "/api/v2/team", s.token, `{"name":"dev"}`)
	require.Equal(t, http.StatusCreated, code, out)
	devTeam := mint(`{"type":"team","principal":"dev","permissions":["**/**"]}`)

	body := func(workflow string) string {
		return fmt.Sprintf(`{"name":"x","workflowRef":%q,"cronSchedule":"0 2 * * *","timezone":"UTC"}`, workflow)
	}
	code, mine := s.call(t, http.MethodPost, "/api/v2/team/ops/schedule", own, body("nightly"))
	require.Equal(t, http.StatusCreated, code, mine)
	theirs := s.create(t, body("other"))
	for _, tc := range []struct {
		name, token, method, path, body string
		want                            int
	}{
		{"another workflow's schedule made", own, http.MethodPost, "/api/v2/team/ops/schedule", body("other"), http.StatusForbidden},
		{"another workflow's schedule read", own, http.MethodGet, "/api/v2/team/ops/schedule/" + theirs["id"].(string), "", http.StatusNotFound},
		{"another workflow's schedule archived", own, http.MethodDelete, "/api/v2/team/ops/schedule/" + theirs["id"].(string), "", http.StatusNotFound},
		{"its own read", own, http.MethodGet, "/api/v2/team/ops/schedule/" + mine["id"].(string), "", http.StatusOK},
		{"scheduling what it may not run", noRuns, http.MethodPost, "/api/v2/team/ops/schedule", body("nightly"), http.StatusForbidden},
		{"backfilling what it may not run", noRuns, http.MethodPost, "/api/v2/team/ops/schedule/" + mine["id"].(string) + "/backfill",
			`{"fromDate":0,"toDate":1000}`, http.StatusForbidden},
		{"another team's token", devTeam, http.MethodGet, "/api/v2/team/ops/schedule/query", "", http.StatusForbidden},
		{"another team's token making one", devTeam, http.MethodPost, "/api/v2/team/ops/schedule", body("nightly"), http.StatusForbidden},
	} {
		code, out := s.call(t, tc.method, tc.path, tc.token, tc.body)
		assert.Equal(t, tc.want, code, "%s: %v", tc.name, out)
	}
	var page struct {
		Content []map[string]any `json:"content"`
	}
	code = s.callJSON(t, http.MethodGet, "/api/v2/team/ops/schedule/query", own, "", &page)
	require.Equal(t, http.StatusOK, code)
	require.Len(t, page.Content, 1, "a workflow's token sees its workflow's schedules only")
	assert.Equal(t, mine["id"], page.Content[0]["id"])
}

// Each overlap policy, with a workflow whose runs last a minute and schedules firing every
// second: allow starts them all; skip starts none while one goes on; cancelOther cancels
// the one going on at each fire; bufferOne keeps one fire and starts it when the run going
// on ends.
func TestIntegrationScheduleOverlap(t *testing.T) {
	t.Parallel()
	s := startSchedules(t)
	require.Eventually(t, func() bool {
		code, out := s.call(t, http.MethodPut, "/api/v2/team/ops/workflow", s.token, `{"name":"slow","triggers":{"schedule":{"enabled":true}},
			"tasks":[{"name":"start","type":"start"},{"name":"wait","type":"sleep","params":[{"name":"duration","value":60000}],"dependencies":[{"taskRef":"start"}]},
			{"name":"end","type":"end","dependencies":[{"taskRef":"wait"}]}]}`)
		require.NotEqual(t, http.StatusBadRequest, code, "%v", out)
		return code == http.StatusOK || code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
	ids := map[string]string{}
	for _, policy := range []string{"allow", "skip", "cancelOther", "bufferOne"} {
		sch := s.create(t, fmt.Sprintf(`{"name":%q,"workflowRef":"slow","cronSchedule":"* * * * * *","timezone":"UTC","overlapPolicy":%q,"labels":{"sched":%q}}`,
			policy, policy, policy))
		ids[policy] = sch["id"].(string)
	}
	status := func(runs []map[string]any) map[string]int {
		n := map[string]int{}
		for _, r := range runs {
			n[r["status"].(string)]++
		}
		return n
	}
	// Wait for four fires of allow: the others have fired as often.
	require.Eventually(t, func() bool { return len(s.runs(t, "allow")) >= 4 }, 30*time.Second, 50*time.Millisecond)
	assert.Len(t, s.runs(t, "skip"), 1, "skip: the first run goes on, every later fire skipped")
	require.Eventually(t, func() bool {
		n := status(s.runs(t, "cancelOther"))
		return n["cancelled"] >= 2 && n["running"] == 1
	}, 30*time.Second, 50*time.Millisecond, "cancelOther: each fire cancels the run before it")
	buffered := s.runs(t, "bufferOne")
	require.Len(t, buffered, 1, "bufferOne: one run, one fire kept")

	// The run going on ends (cancelled here): the fire kept starts at once, and only it.
	code, out := s.call(t, http.MethodDelete, "/api/v2/team/ops/workflowrun/"+buffered[0]["id"].(string)+"/cancel", s.token, "")
	require.Equal(t, http.StatusOK, code, out)
	require.Eventually(t, func() bool { return len(s.runs(t, "bufferOne")) == 2 }, 30*time.Second, 50*time.Millisecond)
	n := status(s.runs(t, "bufferOne"))
	assert.Equal(t, map[string]int{"cancelled": 1, "running": 1}, n)
	for _, policy := range []string{"allow", "skip", "cancelOther", "bufferOne"} {
		code, _ := s.call(t, http.MethodDelete, "/api/v2/team/ops/schedule/"+ids[policy], s.token, "")
		require.Equal(t, http.StatusNoContent, code)
	}
}

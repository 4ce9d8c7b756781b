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

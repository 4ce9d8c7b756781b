package standalone_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// save saves a workflow of team ops from body, once the team has reached the workflows
// service.
func (s *schedules) save(t *testing.T, body string) {
	t.Helper()
	require.Eventually(t, func() bool {
		code, out := s.call(t, http.MethodPut, "/api/v2/team/ops/workflow", s.token, body)
		require.NotEqual(t, http.StatusBadRequest, code, "%v", out)
		return code == http.StatusOK || code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
}

// ended submits a run of team ops's workflow with params, started, and reads it once it
// has completed.
func (s *schedules) ended(t *testing.T, workflow, params string) map[string]any {
	t.Helper()
	code, run := s.call(t, http.MethodPost, "/api/v2/team/ops/workflow/"+workflow+"/submit?start=true", s.token,
		`{"params":`+params+`}`)
	require.Equal(t, http.StatusCreated, code, run)
	id := run["id"].(string)
	require.Eventually(t, func() bool {
		code, run = s.call(t, http.MethodGet, "/api/v2/team/ops/workflowrun/"+id, s.token, "")
		return code == http.StatusOK && run["phase"] == "completed"
	}, 30*time.Second, 20*time.Millisecond, "run %s", id)
	return run
}

// resultOf answers result name of task t, as a run answers it.
func resultOf(t map[string]any, name string) any {
	results, _ := t["results"].([]any)
	for _, r := range results {
		if r := r.(map[string]any); r["name"] == name {
			return r["value"]
		}
	}
	return nil
}

// planner is a workflow of team ops whose task "later" schedules a run of nightly as its
// params say, given here as JSON list items.
func planner(name, params string) string {
	return fmt.Sprintf(`{"name":%q,"params":[{"name":"when","type":"text"}],"tasks":[
		{"name":"start","type":"start"},
		{"name":"later","type":"runscheduledworkflow","dependencies":[{"taskRef":"start"}],"params":[%s]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"later"}]}]}`, name, params)
}

// A runscheduledworkflow task through the gateway: its run succeeds with the schedule's
// id; the schedule is a runOnce schedule of the workflow named, at the time asked, made for
// the run's initiator, with the task's params and labels; at its time it fires that run
// and is completed. A schedule in a minute is due a minute after the task ran; a workflow
// that does not exist fails the task, and a time in the past ends it invalid.
func TestIntegrationRunScheduledWorkflow(t *testing.T) {
	t.Parallel()
	s := startSchedules(t)
	s.save(t, planner("planner", `{"name":"workflowRef","value":"nightly"},{"name":"time","value":"$(params.when)"},
		{"name":"timezone","value":"Europe/Paris"},{"name":"params","value":{"who":"planner"}},{"name":"labels","value":{"sched":"planned"}}`))

	at := time.Now().UTC().Add(3 * time.Second).Truncate(time.Second)
	run := s.ended(t, "planner", fmt.Sprintf(`[{"name":"when","value":%q}]`, at.Format(time.RFC3339)))
	require.Equal(t, "succeeded", run["status"], run["statusMessage"])
	later := task(run, "later")
	require.Equal(t, "succeeded", later["status"], later["statusMessage"])
	id, _ := resultOf(later, "scheduleId").(string)
	require.NotEmpty(t, id, "%v", later["results"])

	code, sch := s.call(t, http.MethodGet, "/api/v2/team/ops/schedule/"+id, s.token, "")
	require.Equal(t, http.StatusOK, code, sch)
	assert.Equal(t, "runOnce", sch["type"])
	assert.Equal(t, "nightly", sch["workflowRef"])
	assert.Equal(t, at.Format("2006-01-02T15:04:05.000Z"), sch["dateSchedule"])
	assert.Equal(t, "Europe/Paris", sch["timezone"])
	assert.Equal(t, "later", sch["name"])
	assert.Contains(t, sch["description"], run["id"])
	assert.Contains(t, sch["params"], map[string]any{"name": "who", "value": "planner"})
	assert.Equal(t, map[string]any{"sched": "planned"}, sch["labels"])

	// At its time the schedule fires the run, once, and is completed.
	require.Eventually(t, func() bool {
		_, got := s.call(t, http.MethodGet, "/api/v2/team/ops/schedule/"+id, s.token, "")
		return got["status"] == "completed"
	}, 30*time.Second, 50*time.Millisecond)
	var fired []map[string]any
	require.Eventually(t, func() bool { fired = s.runs(t, "planned"); return len(fired) == 1 }, 30*time.Second, 50*time.Millisecond)
	assert.Equal(t, "schedule", fired[0]["trigger"])
	assert.Equal(t, "nightly", fired[0]["workflowRef"])
	assert.Equal(t, id, fired[0]["initiatedBy"].(map[string]any)["id"])
	assert.Contains(t, fired[0]["params"], map[string]any{"name": "who", "value": "planner"})

	// futureIn 1 minutes: due a minute after the task ran.
	s.save(t, planner("soon", `{"name":"workflowRef","value":"nightly"},{"name":"futureIn","value":"1"},{"name":"futurePeriod","value":"minutes"}`))
	before := time.Now().UTC().Truncate(time.Millisecond)
	run = s.ended(t, "soon", `[]`)
	after := time.Now().UTC()
	require.Equal(t, "succeeded", run["status"], run["statusMessage"])
	id, _ = resultOf(task(run, "later"), "scheduleId").(string)
	code, sch = s.call(t, http.MethodGet, "/api/v2/team/ops/schedule/"+id, s.token, "")
	require.Equal(t, http.StatusOK, code, sch)
	assert.Equal(t, "active", sch["status"])
	due, err := time.Parse(time.RFC3339, sch["dateSchedule"].(string))
	require.NoError(t, err)
	assert.False(t, due.Before(before.Add(time.Minute)), "due %s, the task ran after %s", due, before)
	assert.False(t, due.After(after.Add(time.Minute)), "due %s, the task ran before %s", due, after)
	assert.Equal(t, sch["dateSchedule"], sch["nextScheduleDate"])

	// Refused: no such workflow fails the task; a time in the past makes it invalid.
	s.save(t, planner("lost", `{"name":"workflowRef","value":"nope"},{"name":"futureIn","value":"1"},{"name":"futurePeriod","value":"days"}`))
	run = s.ended(t, "lost", `[]`)
	assert.Equal(t, "failed", run["status"])
	later = task(run, "later")
	assert.Equal(t, "failed", later["status"])
	assert.Contains(t, later["statusMessage"], "cannot schedule the run: ")
	assert.Contains(t, later["statusMessage"], "nope")
	run = s.ended(t, "planner", `[{"name":"when","value":"2001-01-01T00:00:00Z"}]`)
	later = task(run, "later")
	assert.Equal(t, "invalid", later["status"])
	assert.Contains(t, later["statusMessage"], "in the past")
}

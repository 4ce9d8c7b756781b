package runs_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/runsapi"
)

func nap(name string, ms int) map[string]any {
	return chain(name, map[string]any{"name": "nap", "type": "sleep", "params": []map[string]any{{"name": "duration", "value": ms}}})
}

// medianOf is the true median of ds.
func medianOf(ds []int64) int64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	a, b := s[(len(s)-1)/2], s[len(s)/2]
	return a + (b-a)/2
}

// TestInsights runs workflows that sleep for known times, one that fails at once and one
// that stays running, and checks every field of the insight against the runs themselves,
// with each filter and the window.
func TestInsights(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.defs.put("infra", nap("short", 50))
	f.defs.put("infra", nap("long", 250))
	// A run that sleeps far longer than the test lasts, so that cancelling it never meets
	// its end on a slow machine.
	f.defs.put("infra", nap("held", 600_000))
	f.defs.put("infra", chain("busy", map[string]any{"name": "build", "type": "script", "params": []map[string]any{{"name": "script", "value": "make"}}}))
	f.defs.put("other", nap("short", 50))

	var ids []string
	for _, w := range []string{"short", "long", "short", "long", "short"} {
		ids = append(ids, f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/"+w+"/submit?start=true", nil).body["id"].(string))
	}
	cancelled := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/held/submit?start=true", nil).body["id"].(string)
	f.must(t, http.StatusOK, owner, http.MethodDelete, infra+"/workflowrun/"+cancelled+"/cancel", nil)
	busy := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/busy/submit?start=true", nil).body["id"].(string)
	f.must(t, http.StatusCreated, member("u-o", "O", "other", auth.RoleOwner), http.MethodPost, "/api/v2/team/other/workflow/short/submit?start=true", nil)

	type run struct {
		id, workflow, status, created string
		duration                      int64
	}
	ended := map[string]run{}
	for _, id := range append(ids, cancelled) {
		r := f.waitRun(t, "infra", id, completed)
		ended[id] = run{id, r["workflowName"].(string), r["status"].(string), r["creationDate"].(string), int64(r["duration"].(float64))}
	}
	for _, id := range ids {
		want := int64(50)
		if ended[id].workflow == "long" {
			want = 250
		}
		require.GreaterOrEqual(t, ended[id].duration, want, "a run lasts at least its sleep")
		require.Equal(t, "succeeded", ended[id].status)
	}
	require.Equal(t, "cancelled", ended[cancelled].status)
	f.waitRun(t, "infra", busy, func(r map[string]any) bool { return r["status"] == "running" })

	durations := func(keep func(run) bool) []int64 {
		var out []int64
		for _, id := range append(ids, cancelled) {
			if keep(ended[id]) {
				out = append(out, ended[id].duration)
			}
		}
		return out
	}
	sum := func(ds []int64) (n int64) {
		for _, d := range ds {
			n += d
		}
		return n
	}
	insight := func(query string) map[string]any {
		return f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/insights"+query, nil).body
	}

	// Ended runs only: every field is exact.
	succeeded := durations(func(r run) bool { return r.status == "succeeded" })
	got := insight("?statuses=succeeded")
	assert.EqualValues(t, 5, got["totalRuns"])
	assert.EqualValues(t, 0, got["concurrentRuns"])
	assert.EqualValues(t, sum(succeeded), got["totalDuration"])
	assert.EqualValues(t, medianOf(succeeded), got["medianDuration"])
	summaries := got["runs"].([]any)
	require.Len(t, summaries, 5)
	for i, s := range summaries {
		id := ids[len(ids)-1-i] // newest first
		r := ended[id]
		assert.Equal(t, map[string]any{"id": id, "creationDate": r.created, "duration": float64(r.duration),
			"status": "succeeded", "workflowRef": r.workflow, "workflowName": r.workflow}, s)
	}

	long := durations(func(r run) bool { return r.workflow == "long" || r.workflow == "held" })
	got = insight("?workflows=long,held")
	assert.EqualValues(t, 3, got["totalRuns"])
	assert.EqualValues(t, sum(long), got["totalDuration"])
	assert.EqualValues(t, medianOf(long), got["medianDuration"])

	// The running run counts, with its time so far.
	before := time.Now()
	got = insight("")
	assert.EqualValues(t, 7, got["totalRuns"])
	assert.EqualValues(t, 1, got["concurrentRuns"])
	assert.Greater(t, got["totalDuration"], float64(sum(durations(func(run) bool { return true }))))
	assert.Len(t, got["runs"], 7)
	assert.Equal(t, busy, got["runs"].([]any)[0].(map[string]any)["id"])
	got = insight("?statuses=running,cancelled&workflows=busy,held")
	assert.EqualValues(t, 2, got["totalRuns"])
	assert.EqualValues(t, 1, got["concurrentRuns"])

	// The window: creationDate within [fromDate, toDate], in ms or (older clients) seconds.
	ms := func(d time.Duration) string { return strconv.FormatInt(before.Add(d).UnixMilli(), 10) }
	secs := func(d time.Duration) string { return strconv.FormatInt(before.Add(d).Unix(), 10) }
	windows := []struct {
		query string
		want  float64
	}{
		{"?fromDate=" + ms(time.Minute), 0},
		{"?fromDate=" + ms(-time.Hour), 7},
		{"?toDate=" + ms(-time.Hour), 0},
		{"?fromDate=" + secs(-time.Hour) + "&toDate=" + secs(time.Hour), 7},
		{"?toDate=" + ms(40*24*time.Hour), 0}, // the default window is the 30 days before toDate
		{"?fromDate=" + ms(-time.Hour) + "&toDate=" + ms(40*24*time.Hour), 7},
	}
	for _, w := range windows {
		assert.EqualValues(t, w.want, insight(w.query)["totalRuns"], w.query)
	}

	// Filters and rights.
	f.must(t, http.StatusBadRequest, reader, http.MethodGet, infra+"/insights?statuses=bogus", nil)
	f.must(t, http.StatusBadRequest, reader, http.MethodGet, infra+"/insights?fromDate=yesterday", nil)
	f.must(t, http.StatusForbidden, outsider, http.MethodGet, infra+"/insights", nil)
	token := auth.Principal{Type: auth.TypeWorkflow, ID: "infra/short", Team: "infra", Workflow: "short", Permissions: []string{"**/read"}}
	f.must(t, http.StatusForbidden, token, http.MethodGet, infra+"/insights", nil) // insights are the team's
	assert.EqualValues(t, 1, f.must(t, http.StatusOK, member("u-o", "O", "other", auth.RoleReader), http.MethodGet,
		"/api/v2/team/other/insights", nil).body["totalRuns"])
}

// TestTeamUsage checks what identity is told of a team's run quotas: the month's count, the
// slots held and the month's durations.
func TestTeamUsage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.defs.put("infra", nap("short", 50))
	f.defs.put("infra", chain("busy", map[string]any{"name": "build", "type": "script", "params": []map[string]any{{"name": "script", "value": "make"}}}))
	var ds []int64
	for range 3 {
		id := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/short/submit?start=true", nil).body["id"].(string)
		ds = append(ds, int64(f.waitRun(t, "infra", id, completed)["duration"].(float64)))
	}
	busy := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/busy/submit?start=true", nil).body["id"].(string)
	f.waitRun(t, "infra", busy, func(r map[string]any) bool { return r["status"] == "running" })

	var got runsapi.Usage
	raw := f.must(t, http.StatusOK, service, http.MethodGet, "/internal/v1/teams/infra/usage", nil).raw
	require.NoError(t, json.Unmarshal(raw, &got))
	assert.Equal(t, 4, got.CurrentRuns)
	assert.Equal(t, 1, got.CurrentConcurrentRuns)
	assert.Greater(t, got.CurrentRunTotalDuration, ds[0]+ds[1]+ds[2], "the running run adds its time so far")
	all := append(ds, got.CurrentRunTotalDuration-ds[0]-ds[1]-ds[2])
	assert.Equal(t, medianOf(all), got.CurrentRunMedianDuration)
	assert.Equal(t, runsapi.MonthStart(time.Now()).AddDate(0, 1, 0), got.MonthlyResetDate)

	f.must(t, http.StatusOK, owner, http.MethodDelete, "/api/v2/team/infra/workflowrun/"+busy+"/cancel", nil)
	f.waitRun(t, "infra", busy, completed)
	// The slot is released once the run is put away, just after it ends.
	require.Eventually(t, func() bool {
		raw = f.must(t, http.StatusOK, service, http.MethodGet, "/internal/v1/teams/infra/usage", nil).raw
		require.NoError(t, json.Unmarshal(raw, &got))
		return got.CurrentConcurrentRuns == 0
	}, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, 4, got.CurrentRuns)
	f.must(t, http.StatusForbidden, owner, http.MethodGet, "/internal/v1/teams/infra/usage", nil)
}

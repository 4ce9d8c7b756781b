package standalone_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sleeper is a workflow whose one task sleeps ms milliseconds.
func sleeper(name string, ms int) string {
	return fmt.Sprintf(`{"name":%q,"tasks":[{"name":"start","type":"start"},
		{"name":"nap","type":"sleep","params":[{"name":"duration","value":%d}],"dependencies":[{"taskRef":"start"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"nap"}]}]}`, name, ms)
}

func trueMedian(ds []int64) int64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	a, b := s[(len(s)-1)/2], s[len(s)/2]
	return a + (b-a)/2
}

func total(ds []int64) (n int64) {
	for _, d := range ds {
		n += d
	}
	return n
}

// TestIntegrationInsightsAndQuotaUsage runs workflows of known durations through the
// gateway, then checks every field of the team's insights with each filter and the window,
// and the team's quota usage, which identity reads from the services owning the counters.
// Its teams are used by their first workflow right after they are created, with no wait.
func TestIntegrationInsightsAndQuotaUsage(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})

	// A team, then at once its first workflow: never a 404 while the team's event travels.
	for i := range 10 {
		team := "fresh-" + strconv.Itoa(i)
		code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"`+team+`"}`)
		require.Equal(t, http.StatusCreated, code, out)
		code, out = b.call(t, http.MethodPost, "/api/v2/team/"+team+"/workflow", b.token, sleeper("first", 10))
		require.Equal(t, http.StatusCreated, code, "team %s: %v", team, out)
	}

	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"ins"}`)
	require.Equal(t, http.StatusCreated, code, out)
	for _, w := range []string{sleeper("short", 100), sleeper("long", 400), sleeper("slow", 600000)} {
		code, out = b.call(t, http.MethodPost, "/api/v2/team/ins/workflow", b.token, w)
		require.Equal(t, http.StatusCreated, code, out)
	}
	submit := func(w string) string {
		code, run := b.call(t, http.MethodPost, "/api/v2/team/ins/workflow/"+w+"/submit?start=true", b.token, `{}`)
		require.Equal(t, http.StatusCreated, code, run)
		return run["id"].(string)
	}
	type run struct {
		id, workflow, created string
		duration              int64
	}
	var ended []run
	for _, w := range []string{"short", "long", "short", "long", "short"} {
		ended = append(ended, run{id: submit(w), workflow: w})
	}
	slow := submit("slow")
	for i, r := range ended {
		var got map[string]any
		require.Eventually(t, func() bool {
			_, got = b.call(t, http.MethodGet, "/api/v2/team/ins/workflowrun/"+r.id, b.token, "")
			return got["phase"] == "completed"
		}, 30*time.Second, 20*time.Millisecond)
		require.Equal(t, "succeeded", got["status"], got)
		ended[i].created, ended[i].duration = got["creationDate"].(string), int64(got["duration"].(float64))
		want := int64(100)
		if r.workflow == "long" {
			want = 400
		}
		require.GreaterOrEqual(t, ended[i].duration, want, "a run lasts at least its sleep")
	}
	insight := func(query string) map[string]any {
		code, out := b.call(t, http.MethodGet, "/api/v2/team/ins/insights"+query, b.token, "")
		require.Equal(t, http.StatusOK, code, out)
		return out
	}
	durations := func(workflow string) []int64 {
		var out []int64
		for _, r := range ended {
			if workflow == "" || r.workflow == workflow {
				out = append(out, r.duration)
			}
		}
		return out
	}

	got := insight("?statuses=succeeded")
	assert.EqualValues(t, 5, got["totalRuns"])
	assert.EqualValues(t, 0, got["concurrentRuns"])
	assert.EqualValues(t, total(durations("")), got["totalDuration"])
	assert.EqualValues(t, trueMedian(durations("")), got["medianDuration"])
	summaries := got["runs"].([]any)
	require.Len(t, summaries, 5)
	for i, s := range summaries {
		r := ended[len(ended)-1-i] // newest first
		assert.Equal(t, map[string]any{"id": r.id, "creationDate": r.created, "duration": float64(r.duration),
			"status": "succeeded", "workflowRef": r.workflow, "workflowName": r.workflow}, s)
	}
	for _, w := range []string{"short", "long"} {
		got = insight("?workflows=" + w)
		assert.EqualValues(t, len(durations(w)), got["totalRuns"], w)
		assert.EqualValues(t, total(durations(w)), got["totalDuration"], w)
		assert.EqualValues(t, trueMedian(durations(w)), got["medianDuration"], w)
	}
	got = insight("")
	assert.EqualValues(t, 6, got["totalRuns"])
	assert.EqualValues(t, 1, got["concurrentRuns"], "the slow run is running")
	assert.Equal(t, slow, got["runs"].([]any)[0].(map[string]any)["id"])
	got = insight("?statuses=running&workflows=slow,short")
	assert.EqualValues(t, 1, got["totalRuns"])
	assert.EqualValues(t, 1, got["concurrentRuns"])

	now := time.Now()
	windows := []struct {
		query string
		want  float64
	}{
		{fmt.Sprintf("?fromDate=%d", now.Add(time.Minute).UnixMilli()), 0},
		{fmt.Sprintf("?fromDate=%d", now.Add(-time.Hour).UnixMilli()), 6},
		{fmt.Sprintf("?fromDate=%d&toDate=%d", now.Add(-time.Hour).Unix(), now.Add(time.Hour).Unix()), 6}, // seconds
		{fmt.Sprintf("?toDate=%d", now.Add(-time.Hour).UnixMilli()), 0},
		{fmt.Sprintf("?toDate=%d", now.Add(31*24*time.Hour).UnixMilli()), 0}, // 30 days before toDate
	}
	for _, w := range windows {
		assert.EqualValues(t, w.want, insight(w.query)["totalRuns"], w.query)
	}
	code, out = b.call(t, http.MethodGet, "/api/v2/team/ins/insights?statuses=nonsense", b.token, "")
	assert.Equal(t, http.StatusBadRequest, code, out)

	// The team's quota usage, from the owners of each counter.
	quotas := func() map[string]any {
		code, team := b.call(t, http.MethodGet, "/api/v2/team/ins", b.token, "")
		require.Equal(t, http.StatusOK, code, team)
		return team["quotas"].(map[string]any)
	}
	q := quotas()
	assert.EqualValues(t, 3, q["currentWorkflowCount"])
	assert.EqualValues(t, 6, q["currentRuns"])
	assert.EqualValues(t, 1, q["currentConcurrentRuns"])
	assert.Greater(t, q["currentRunTotalDuration"], float64(total(durations(""))), "the slow run adds its time so far")
	utc := now.UTC()
	assert.Equal(t, time.Date(utc.Year(), utc.Month()+1, 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02"), q["monthlyResetDate"].(string)[:10])

	code, out = b.call(t, http.MethodDelete, "/api/v2/team/ins/workflowrun/"+slow+"/cancel", b.token, "")
	require.Equal(t, http.StatusOK, code, out)
	require.Eventually(t, func() bool { return quotas()["currentConcurrentRuns"] == float64(0) }, 10*time.Second, 20*time.Millisecond)
	_, cancelled := b.call(t, http.MethodGet, "/api/v2/team/ins/workflowrun/"+slow, b.token, "")
	all := append(durations(""), int64(cancelled["duration"].(float64)))
	q = quotas()
	assert.EqualValues(t, 6, q["currentRuns"])
	assert.EqualValues(t, total(all), q["currentRunTotalDuration"])
	assert.EqualValues(t, trueMedian(all), q["currentRunMedianDuration"])
}

// /metrics names internal addresses: it is served for operators on BATON_ADMIN_ADDR, and
// the gateway's public port answers it 404.
func TestIntegrationMetricsOnlyForOperators(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	require.NotEmpty(t, b.admin, "the start banner names the operators' listener")
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(raw)
	}
	tests := []struct {
		name, url string
		want      int
	}{
		{"public port", b.url + "/metrics", http.StatusNotFound},
		{"public port, API prefix", b.url + "/api/v2/metrics", http.StatusNotFound},
		{"operators' listener", b.admin + "/metrics", http.StatusOK},
	}
	for _, tt := range tests {
		code, body := get(tt.url)
		assert.Equal(t, tt.want, code, "%s: %s", tt.name, body)
		if tt.want == http.StatusOK {
			assert.True(t, strings.Contains(body, "# TYPE"), "Prometheus text on the operators' listener")
		} else {
			assert.NotContains(t, body, "# TYPE")
		}
	}
}

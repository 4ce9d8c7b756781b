package standalone_test

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/contract"
)

// A workflow of a catalogue task, a script task and an inline task runs end to end:
// gateway → runs → workflows, tasks, identity → Kafka → runner → a real process → back.
func TestIntegrationEngine(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token,
		`{"name":"eng","parameters":[{"name":"greeting","type":"text","value":"hello"},{"name":"pw","type":"password","value":"hunter2-secret"}]}`)
	require.Equal(t, http.StatusCreated, code, out)
	code, out = b.call(t, http.MethodPost, "/api/v2/team/eng/task", b.token,
		`{"name":"say","type":"template","spec":{"image":"alpine:3","script":"echo \"$(params.word) from the catalogue\" > $(results.said.path)","params":[{"name":"word","type":"text","default":"hi"}],"results":[{"name":"said"}]}}`)
	require.Equal(t, http.StatusCreated, code, out)
	workflow := `{"name":"pipeline","params":[{"name":"who","type":"text","default":"world"}],"tasks":[
		{"name":"start","type":"start"},
		{"name":"say","type":"template","taskRef":"eng/say","params":[{"name":"word","value":"$(team.params.greeting)"}],"dependencies":[{"taskRef":"start"}]},
		{"name":"build","type":"script","results":["out"],"params":[{"name":"script","value":"echo building for $(params.who) with $(params.pw); printf '%s' \"$(tasks.say.results.said)\" > $(results.out.path)"}],"dependencies":[{"taskRef":"say"}]},
		{"name":"record","type":"setwfproperty","params":[{"name":"output","value":"artifact"},{"name":"value","value":"$(tasks.build.results.out)"}],"dependencies":[{"taskRef":"build"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"record"}]}]}`
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/eng/workflow", b.token, workflow)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)

	code, run := b.call(t, http.MethodPost, "/api/v2/team/eng/workflow/pipeline/submit?start=true", b.token, `{"params":[{"name":"who","value":"Baton"}]}`)
	require.Equal(t, http.StatusCreated, code, run)
	id := run["id"].(string)
	var done map[string]any
	require.Eventually(t, func() bool {
		_, done = b.call(t, http.MethodGet, "/api/v2/team/eng/workflowrun/"+id, b.token, "")
		return done["phase"] == "completed"
	}, 60*time.Second, 50*time.Millisecond)
	require.Equal(t, "succeeded", done["status"], done)
	assert.Equal(t, []any{map[string]any{"name": "artifact", "value": "hello from the catalogue"}}, done["results"])

	build := done["tasks"].([]any)[2].(map[string]any)
	// The log of a task that ended reads the same followed or not.
	for _, query := range []string{"", "?follow=true"} {
		req, err := http.NewRequest(http.MethodGet, b.url+"/api/v2/taskrun/"+build["id"].(string)+"/log"+query, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+b.token)
		res, err := contract.Client(t, nil).Do(req)
		require.NoError(t, err)
		log, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		assert.Equal(t, http.StatusOK, res.StatusCode, query)
		assert.Equal(t, "building for Baton with ********\n", string(log), "the secret is masked%s", query)
	}

	// A run that just ended is being put away in the archive; the count is exact once it is.
	require.Eventually(t, func() bool {
		code, count := b.call(t, http.MethodGet, "/api/v2/team/eng/workflowrun/count", b.token, "")
		return code == http.StatusOK && count["status"].(map[string]any)["succeeded"] == float64(1)
	}, 60*time.Second, 20*time.Millisecond)
	code, out = b.call(t, http.MethodPut, "/api/v2/team/eng/workflowrun/"+id+"/start", b.token, "")
	assert.Equal(t, http.StatusConflict, code)
	assert.True(t, strings.HasPrefix(out["reason"].(string), "WORKFLOWRUN_INVALID_PHASE"))
}

// A submit made right after a save runs the version saved, every time: the runs service
// takes no workflow from a cache that the save has not reached yet.
func TestIntegrationSubmitAfterSaveRunsTheSavedVersion(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"flip"}`)
	require.Equal(t, http.StatusCreated, code, out)
	version := func(v int) string {
		return fmt.Sprintf(`{"name":"flip","tasks":[{"name":"start","type":"start"},
			{"name":"mark","type":"setwfproperty","params":[{"name":"output","value":"v"},{"name":"value","value":"%d"}],"dependencies":[{"taskRef":"start"}]},
			{"name":"end","type":"end","dependencies":[{"taskRef":"mark"}]}]}`, v)
	}
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/flip/workflow", b.token, version(0))
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
	for v := 1; v <= 20; v++ {
		code, out := b.call(t, http.MethodPut, "/api/v2/team/flip/workflow", b.token, version(v))
		require.Equal(t, http.StatusOK, code, out)
		code, run := b.call(t, http.MethodPost, "/api/v2/team/flip/workflow/flip/submit?start=true", b.token, `{}`)
		require.Equal(t, http.StatusCreated, code, run)
		require.Equal(t, "completed", run["phase"], "a run of inline tasks completes within its submit")
		assert.Equal(t, []any{map[string]any{"name": "v", "value": strconv.Itoa(v)}}, run["results"], "save %d", v)
	}
}

// sleeping starts Baton, creates team with a workflow "slow" that sleeps ten minutes, and
// starts a run of it; it answers the run's id.
func sleeping(t *testing.T, team string) (*baton, string) {
	t.Helper()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"`+team+`"}`)
	require.Equal(t, http.StatusCreated, code, out)
	workflow := `{"name":"slow","tasks":[{"name":"start","type":"start"},
		{"name":"wait","type":"sleep","params":[{"name":"duration","value":600000}],"dependencies":[{"taskRef":"start"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"wait"}]}]}`
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/"+team+"/workflow", b.token, workflow)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
	code, run := b.call(t, http.MethodPost, "/api/v2/team/"+team+"/workflow/slow/submit?start=true", b.token, `{}`)
	require.Equal(t, http.StatusCreated, code, run)
	return b, run["id"].(string)
}

// A workflow or a team with a run in flight is not deleted, unless force cancels the run
// first.
func TestIntegrationDeleteWaitsForRuns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, reason string
	}{
		{name: "workflow", path: "/api/v2/team/del/workflow/slow", reason: "WORKFLOW_HAS_ACTIVE_RUNS"},
		{name: "team", path: "/api/v2/team/del", reason: "TEAM_HAS_ACTIVE_RUNS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, id := sleeping(t, "del")
			code, out := b.call(t, http.MethodDelete, tt.path, b.token, "")
			assert.Equal(t, http.StatusConflict, code)
			assert.Equal(t, tt.reason, out["reason"])
			code, out = b.call(t, http.MethodDelete, tt.path+"?force=true", b.token, "")
			require.True(t, code == http.StatusOK || code == http.StatusNoContent, "%d %v", code, out)
			code, done := b.call(t, http.MethodGet, "/api/v2/team/del/workflowrun/"+id, b.token, "")
			if tt.name == "team" && code == http.StatusNotFound {
				// Cancelled, then removed with its team: what a deleted team leaves is
				// deleted soon after, sooner on some stores than others.
				assert.Equal(t, "WORKFLOWRUN_NOT_FOUND", done["reason"], done)
			} else {
				assert.Equal(t, "cancelled", done["status"], done)
			}
			code, _ = b.call(t, http.MethodGet, tt.path, b.token, "")
			assert.Equal(t, http.StatusNotFound, code, "deleted")
		})
	}
}

// A workflow that runs itself, on a team of two concurrency slots, stops at the depth the
// runs.maxDepth setting allows: the setting reaches the engine through identity.
func TestIntegrationChildRunDepthSetting(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	// PUT /settings answers a list, which call does not read.
	req, err := http.NewRequest(http.MethodPut, b.url+"/api/v2/settings", strings.NewReader(`[{"key":"runs","config":[{"key":"maxDepth","value":3}]}]`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+b.token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode)
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"rec","quotas":{"maxConcurrentRuns":2}}`)
	require.Equal(t, http.StatusCreated, code, out)
	workflow := `{"name":"loop","tasks":[{"name":"start","type":"start"},
		{"name":"again","type":"runworkflow","params":[{"name":"workflowRef","value":"loop"}],"dependencies":[{"taskRef":"start"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"again"}]}]}`
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/rec/workflow", b.token, workflow)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)

	code, run := b.call(t, http.MethodPost, "/api/v2/team/rec/workflow/loop/submit?start=true", b.token, `{}`)
	require.Equal(t, http.StatusCreated, code, run)
	var root map[string]any
	require.Eventually(t, func() bool {
		_, root = b.call(t, http.MethodGet, "/api/v2/team/rec/workflowrun/"+run["id"].(string), b.token, "")
		return root["phase"] == "completed"
	}, 60*time.Second, 50*time.Millisecond)
	assert.Equal(t, "failed", root["status"], root)

	// Root and three nested levels; a run being put away may be listed twice for a moment.
	var depths map[float64]string
	require.Eventually(t, func() bool {
		_, page := b.call(t, http.MethodGet, "/api/v2/team/rec/workflowrun/query?workflows=loop&limit=1000", b.token, "")
		depths = map[float64]string{}
		for _, item := range page["content"].([]any) {
			r := item.(map[string]any)
			depths[r["depth"].(float64)] = r["id"].(string)
		}
		return len(depths) == 4 && page["totalElements"] == float64(4)
	}, 30*time.Second, 50*time.Millisecond)
	_, deepest := b.call(t, http.MethodGet, "/api/v2/team/rec/workflowrun/"+depths[3], b.token, "")
	task := deepest["tasks"].([]any)[1].(map[string]any)
	assert.Equal(t, "invalid", task["status"], task)
	assert.Contains(t, task["statusMessage"], "runs.maxDepth")
}

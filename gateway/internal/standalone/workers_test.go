package standalone_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// httpWorker is a worker of a queue over HTTP, as a user would write one with nothing but
// an HTTP client: it claims, beats, logs and ends attempts through the gateway.
type httpWorker struct {
	b           *baton
	team, queue string
	token, name string
	t           *testing.T
}

func (w *httpWorker) path(rest string) string {
	return "/api/v2/team/" + w.team + "/queue/" + w.queue + rest
}

// claim waits up to wait for an attempt; nil when none came.
func (w *httpWorker) claim(wait int) map[string]any {
	w.t.Helper()
	code, out := w.b.call(w.t, http.MethodPost, w.path("/claim"), w.token, fmt.Sprintf(`{"worker":%q,"waitSeconds":%d}`, w.name, wait))
	if code == http.StatusNoContent {
		return nil
	}
	require.Equal(w.t, http.StatusOK, code, out)
	return out
}

func (w *httpWorker) beat(id string) (int, map[string]any) {
	return w.b.call(w.t, http.MethodPost, w.path("/attempt/"+id+"/heartbeat"), w.token, fmt.Sprintf(`{"worker":%q}`, w.name))
}

func (w *httpWorker) log(id string, seq int, text string) int {
	body, _ := json.Marshal(map[string]any{"worker": w.name, "seq": seq, "text": text})
	code, _ := w.b.call(w.t, http.MethodPost, w.path("/attempt/"+id+"/log"), w.token, string(body))
	return code
}

func (w *httpWorker) end(id, status string, results map[string]string) (int, map[string]any) {
	end := map[string]any{"worker": w.name, "status": status}
	if results != nil {
		end["results"] = results
	}
	body, _ := json.Marshal(end)
	return w.b.call(w.t, http.MethodPost, w.path("/attempt/"+id+"/end"), w.token, string(body))
}

// Three generic tasks in a chain are served, one after the other, by a worker over HTTP
// holding a token of their queue alone: each attempt is claimed once, beaten for, logged
// and ended with results the next task reads. A token of another queue claims nothing.
func TestIntegrationWorkersServeGenericTasksOverHTTP(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error", "BATON_RATE_LIMIT": "0"})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"ops"}`)
	require.Equal(t, http.StatusCreated, code, out)
	generic := func(name, dep, extra string) string {
		return `{"name":"` + name + `","type":"generic","dependencies":[{"taskRef":"` + dep + `"}],"results":[{"name":"out"}],
			"params":[{"name":"queue","value":"deploy"}` + extra + `]}`
	}
	workflow := `{"name":"release","tasks":[{"name":"start","type":"start"},` +
		generic("build", "start", "") + `,` +
		generic("test", "build", `,{"name":"artifact","value":"$(tasks.build.results.out)"}`) + `,` +
		generic("ship", "test", `,{"name":"verdict","value":"$(tasks.test.results.out)"}`) + `,
		{"name":"end","type":"end","dependencies":[{"taskRef":"ship"}]}]}`
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/ops/workflow", b.token, workflow)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
	mint := func(perm string) string {
		code, out := b.call(t, http.MethodPost, "/api/v2/token", b.token, `{"type":"team","principal":"ops","permissions":["`+perm+`"]}`)
		require.Equal(t, http.StatusCreated, code, out)
		return out["token"].(string)
	}
	w := &httpWorker{b: b, team: "ops", queue: "deploy", token: mint("queue:deploy/action"), name: "host-1/0", t: t}
	other := &httpWorker{b: b, team: "ops", queue: "deploy", token: mint("queue:build/action"), name: "host-2/0", t: t}
	code, out = b.call(t, http.MethodPost, other.path("/claim"), other.token, `{"worker":"host-2/0"}`)
	assert.Equal(t, http.StatusForbidden, code, "a token of another queue: %v", out)
	assert.Nil(t, w.claim(0), "nothing waits yet")

	code, run := b.call(t, http.MethodPost, "/api/v2/team/ops/workflow/release/submit?start=true", b.token, `{}`)
	require.Equal(t, http.StatusCreated, code, run)
	runID := run["id"].(string)
	served := map[string]map[string]any{}
	for len(served) < 3 {
		a := w.claim(10)
		require.NotNil(t, a, "an attempt came within the wait")
		name := a["name"].(string)
		require.NotContains(t, served, name, "each task claimed once")
		served[name] = a
		assert.Equal(t, runID, a["runId"])
		assert.EqualValues(t, 1, a["attempt"])
		assert.Equal(t, []any{"out"}, a["results"])
		assert.Positive(t, a["heartbeatSeconds"])
		id := a["id"].(string)
		code, beat := w.beat(id)
		require.Equal(t, http.StatusOK, code, beat)
		assert.Equal(t, false, beat["cancel"])
		assert.Equal(t, http.StatusNoContent, w.log(id, 0, "working on "+name+"\n"))
		code, out := other.end(id, "succeeded", nil)
		assert.Equal(t, http.StatusForbidden, code, "another queue's token ends nothing: %v", out)
		code, out = w.end(id, "succeeded", map[string]string{"out": name + "-ok"})
		require.Equal(t, http.StatusNoContent, code, out)
		code, out = w.end(id, "succeeded", map[string]string{"out": name + "-ok"})
		assert.Equal(t, http.StatusNoContent, code, "an end said again: %v", out)
	}
	assert.Equal(t, "build-ok", served["test"]["params"].(map[string]any)["artifact"], "results flow to the next task")
	assert.Equal(t, "test-ok", served["ship"]["params"].(map[string]any)["verdict"])

	require.Eventually(t, func() bool {
		_, r := b.call(t, http.MethodGet, "/api/v2/team/ops/workflowrun/"+runID, b.token, "")
		return r["status"] == "succeeded"
	}, 30*time.Second, 20*time.Millisecond)
	assert.Equal(t, "working on test\n", readAll(t, b, "/api/v2/taskrun/"+served["test"]["taskRunId"].(string)+"/log", b.token))
}

// A worker that stops beating loses its attempt when its lease lapses; the attempt is
// retried, another worker claims the next one, and the lost worker's late end is refused.
func TestIntegrationAWorkerThatStopsLosesItsAttempt(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error",
		"BATON_RATE_LIMIT": "0", "BATON_RUNS_RUNNER_LEASE": "2s"})
	id := b.runTask(t, "lost", `{"name":"only","type":"generic","retries":1,"dependencies":[{"taskRef":"start"}],
		"params":[{"name":"queue","value":"jobs"}]}`)
	runID := id[:strings.LastIndexByte(id, '.')]
	dead := &httpWorker{b: b, team: "lost", queue: "jobs", token: b.token, name: "dead", t: t}
	first := dead.claim(10)
	require.NotNil(t, first)
	assert.EqualValues(t, 2, first["leaseSeconds"])

	alive := &httpWorker{b: b, team: "lost", queue: "jobs", token: b.token, name: "alive", t: t}
	var second map[string]any
	require.Eventually(t, func() bool { second = alive.claim(1); return second != nil }, time.Minute, time.Millisecond,
		"the attempt is retried once the silent worker's lease lapsed")
	assert.EqualValues(t, 2, second["attempt"])
	code, out := dead.end(first["id"].(string), "succeeded", nil)
	assert.Equal(t, http.StatusConflict, code, "the lost worker's end: %v", out)
	code, _ = dead.beat(first["id"].(string))
	assert.Equal(t, http.StatusConflict, code, "the lost worker's beat")
	code, out = alive.end(second["id"].(string), "succeeded", nil)
	require.Equal(t, http.StatusNoContent, code, out)
	require.Eventually(t, func() bool {
		_, r := b.call(t, http.MethodGet, "/api/v2/team/lost/workflowrun/"+runID, b.token, "")
		return r["status"] == "succeeded"
	}, 30*time.Second, 20*time.Millisecond)
}

// A run cancelled while a worker holds its attempt tells the worker at its next beat, and
// the worker's end, cancelled, is taken.
func TestIntegrationACancelReachesTheWorker(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error", "BATON_RATE_LIMIT": "0"})
	id := b.runTask(t, "stop", `{"name":"only","type":"generic","dependencies":[{"taskRef":"start"}],
		"params":[{"name":"queue","value":"jobs"}]}`)
	runID := id[:strings.LastIndexByte(id, '.')]
	w := &httpWorker{b: b, team: "stop", queue: "jobs", token: b.token, name: "w", t: t}
	a := w.claim(10)
	require.NotNil(t, a)
	code, beat := w.beat(a["id"].(string))
	require.Equal(t, http.StatusOK, code, beat)
	require.Equal(t, false, beat["cancel"])

	code, out := b.call(t, http.MethodDelete, "/api/v2/team/stop/workflowrun/"+runID+"/cancel", b.token, "")
	require.Equal(t, http.StatusOK, code, out)
	code, beat = w.beat(a["id"].(string))
	require.Equal(t, http.StatusOK, code, beat)
	assert.Equal(t, true, beat["cancel"], "the worker is told to stop")
	code, out = w.end(a["id"].(string), "cancelled", nil)
	assert.Equal(t, http.StatusNoContent, code, out)
	_, r := b.call(t, http.MethodGet, "/api/v2/team/stop/workflowrun/"+runID, b.token, "")
	assert.Equal(t, "cancelled", r["status"])
}

// An end with claimNext claims the worker's next attempt in the same call: the queue's
// oldest waiting, answered as a claim answers it; none waiting, it answers 204, the end
// taken all the same.
func TestIntegrationAnEndClaimsTheNextAttempt(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error", "BATON_RATE_LIMIT": "0"})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"pair"}`)
	require.Equal(t, http.StatusCreated, code, out)
	generic := func(name string) string {
		return `{"name":"` + name + `","type":"generic","dependencies":[{"taskRef":"start"}],"params":[{"name":"queue","value":"jobs"}]}`
	}
	workflow := `{"name":"both","tasks":[{"name":"start","type":"start"},` + generic("left") + `,` + generic("right") + `,
		{"name":"end","type":"end","dependencies":[{"taskRef":"left"},{"taskRef":"right"}]}]}`
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/pair/workflow", b.token, workflow)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
	code, run := b.call(t, http.MethodPost, "/api/v2/team/pair/workflow/both/submit?start=true", b.token, `{}`)
	require.Equal(t, http.StatusCreated, code, run)
	runID := run["id"].(string)

	w := &httpWorker{b: b, team: "pair", queue: "jobs", token: b.token, name: "w", t: t}
	first := w.claim(10)
	require.NotNil(t, first)
	endNext := func(id string) (int, map[string]any) {
		return b.call(t, http.MethodPost, w.path("/attempt/"+id+"/end"), w.token, `{"worker":"w","status":"succeeded","claimNext":true}`)
	}
	var second map[string]any
	require.Eventually(t, func() bool {
		// The other task's attempt may not be queued yet when the first is ended: an end
		// said again is taken again.
		code, second = endNext(first["id"].(string))
		require.Contains(t, []int{http.StatusOK, http.StatusNoContent}, code, second)
		return code == http.StatusOK
	}, 30*time.Second, 20*time.Millisecond, "the end answers the next attempt")
	assert.Equal(t, runID, second["runId"])
	assert.NotEqual(t, first["name"], second["name"], "the other task's attempt")
	assert.Positive(t, second["heartbeatSeconds"])
	code, beat := w.beat(second["id"].(string))
	require.Equal(t, http.StatusOK, code, "claimed for the worker: %v", beat)

	code, out = endNext(second["id"].(string))
	assert.Equal(t, http.StatusNoContent, code, "nothing waits: the end alone: %v", out)
	require.Eventually(t, func() bool {
		_, r := b.call(t, http.MethodGet, "/api/v2/team/pair/workflowrun/"+runID, b.token, "")
		return r["status"] == "succeeded"
	}, 30*time.Second, 20*time.Millisecond)
}

// A claim waits as long as it asks, past the gateway's upstream timeout: the timeout runs
// from the end of the wait, for the claim and for an end that claims the next attempt.
func TestIntegrationAClaimWaitsPastTheUpstreamTimeout(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error",
		"BATON_RATE_LIMIT": "0", "BATON_UPSTREAM_TIMEOUT": "3s"})
	id := b.runTask(t, "patient", `{"name":"only","type":"generic","dependencies":[{"taskRef":"start"}],
		"params":[{"name":"queue","value":"jobs"}]}`)
	w := &httpWorker{b: b, team: "patient", queue: "jobs", token: b.token, name: "w", t: t}
	a := w.claim(10)
	require.NotNil(t, a)
	require.Equal(t, id, a["taskRunId"])
	assert.Nil(t, w.claim(4), "nothing else comes: 204, not a gateway timeout")
	code, out := b.call(t, http.MethodPost, w.path("/attempt/"+a["id"].(string)+"/end"), w.token,
		`{"worker":"w","status":"succeeded","claimNext":true,"waitSeconds":4}`)
	assert.Equal(t, http.StatusNoContent, code, "the end, then no attempt within the wait: %v", out)
}

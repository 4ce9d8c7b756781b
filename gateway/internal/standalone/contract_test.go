package standalone_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/contract"
)

// tour sends requests through the gateway as the admin, each exchange checked against the
// contract.
type tour struct {
	t *testing.T
	b *baton
}

// send answers the status and the decoded body (nil when empty or not JSON).
func (tr tour) send(method, path, body string) (int, any) {
	tr.t.Helper()
	return tr.sendAs(method, path, "application/json", body)
}

// sendAs is send with a body of contentType.
func (tr tour) sendAs(method, path, contentType, body string) (int, any) {
	tr.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, tr.b.url+path, rd)
	require.NoError(tr.t, err)
	if body != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+tr.b.token)
	resp, err := contract.Client(tr.t, nil).Do(req)
	require.NoError(tr.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(tr.t, err)
	var out any
	if json.Valid(raw) {
		require.NoError(tr.t, json.Unmarshal(raw, &out))
	}
	return resp.StatusCode, out
}

// must sends a request that must be answered want, and answers its body.
func (tr tour) must(want int, method, path, body string) any {
	tr.t.Helper()
	code, out := tr.send(method, path, body)
	require.Equal(tr.t, want, code, "%s %s: %v", method, path, out)
	return out
}

// field is the string at key of an object body.
func field(t *testing.T, body any, key string) string {
	t.Helper()
	m, ok := body.(map[string]any)
	require.True(t, ok, "not an object: %v", body)
	s, ok := m[key].(string)
	require.True(t, ok, "no %s in %v", key, body)
	return s
}

// byName reads a run's or a task run's params or results, the contract's list of
// {name, value}, as a map of name to value.
func byName(t *testing.T, list any) map[string]any {
	t.Helper()
	items, ok := list.([]any)
	require.True(t, ok, "not a list of {name, value}: %v", list)
	out := map[string]any{}
	for _, item := range items {
		nv, ok := item.(map[string]any)
		require.True(t, ok, "not a {name, value}: %v", item)
		out[nv["name"].(string)] = nv["value"]
	}
	return out
}

// TestIntegrationContractTour walks the API's operations the way a client uses them — the
// system's settings, a team with parameters and members, catalogue and team tasks,
// templates, workflows and their canvas, runs from submit to retry, tokens — each answer asked for a success, and every exchange checked against the
// published contract, so a field, a type or a status the document and the service
// disagree on fails here.
func TestIntegrationContractTour(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{
		"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error",
		"BATON_RATE_LIMIT": "0",
	})
	tr := tour{t: t, b: b}
	const ok, created, gone = http.StatusOK, http.StatusCreated, http.StatusNoContent

	// The system.
	for _, path := range []string{"/api/v2/features", "/api/v2/context", "/api/v2/navigation", "/api/v2/settings",
		"/api/v2/team/roles", "/api/v2/team/quotas/default", "/api/v2/profile", "/api/v2/user/profile",
		"/api/v2/parameters", "/api/v2/global-params", "/api/v2/task/query", "/api/v2/workflowtemplate/query",
		"/api/v2/team/query", "/api/v2/user/query", "/api/v2/token/query"} {
		tr.must(ok, http.MethodGet, path, "")
	}
	tr.must(ok, http.MethodPut, "/api/v2/activate", "")
	tr.must(created, http.MethodPost, "/api/v2/parameters", `{"name":"region","type":"text","value":"eu"}`)
	tr.must(ok, http.MethodPut, "/api/v2/parameters", `{"name":"region","type":"text","value":"us"}`)
	tr.must(created, http.MethodPost, "/api/v2/parameters", `{"name":"old","type":"text","value":"x"}`)
	tr.must(gone, http.MethodDelete, "/api/v2/parameters/old", "")

	// A team, its parameters and members.
	tr.must(ok, http.MethodPost, "/api/v2/team/validate-name", `{"name":"tour"}`)
	tr.must(created, http.MethodPost, "/api/v2/team",
		`{"name":"tour","displayName":"Tour","labels":{"env":"test"},"parameters":[{"name":"greeting","type":"text","value":"hello"},{"name":"pw","type":"password","value":"s3cret"}]}`)
	tr.must(ok, http.MethodGet, "/api/v2/team/tour", "")
	tr.must(ok, http.MethodPatch, "/api/v2/team/tour",
		`{"displayName":"The tour","members":[{"email":"ada@example.com","role":"editor"}],"approverGroups":[{"name":"leads","approvers":["ada@example.com"]}]}`)
	tr.must(gone, http.MethodDelete, "/api/v2/team/tour/parameters/pw", "")
	users := tr.must(ok, http.MethodGet, "/api/v2/user/query?limit=10", "")
	ada := ""
	for _, u := range users.(map[string]any)["content"].([]any) {
		if u.(map[string]any)["email"] == "ada@example.com" {
			ada = field(t, u, "id")
		}
	}
	require.NotEmpty(t, ada, "members by email are users: %v", users)
	tr.must(ok, http.MethodGet, "/api/v2/user/"+ada, "")
	tr.must(gone, http.MethodPatch, "/api/v2/user/"+ada, `{"displayName":"Ada"}`)

	// Tasks: one of the team's, one of the catalogue.
	task := `{"name":"say","type":"template","spec":{"image":"alpine:3","script":"echo $(params.word) > $(results.said.path)","params":[{"name":"word","type":"text","default":"hi"}],"results":[{"name":"said"}]}}`
	tekton := `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: say
spec:
  params:
    - name: word
      default: hi
  results:
    - name: said
  steps:
    - name: say
      image: alpine:3
      script: echo $(params.word) > $(results.said.path)
`
	code, out := tr.sendAs(http.MethodPost, "/api/v2/team/tour/task/validate", "application/x-yaml", tekton)
	require.Equal(t, gone, code, "%v", out)
	tr.must(created, http.MethodPost, "/api/v2/team/tour/task", task)
	tr.must(ok, http.MethodGet, "/api/v2/team/tour/task/say", "")
	tr.must(ok, http.MethodPut, "/api/v2/team/tour/task/say", strings.Replace(task, `"hi"`, `"hey"`, 1))
	tr.must(ok, http.MethodGet, "/api/v2/team/tour/task/say/changelog", "")
	tr.must(ok, http.MethodGet, "/api/v2/team/tour/task/query", "")
	global := strings.Replace(task, `"say"`, `"tour-say"`, 1)
	code, out = tr.sendAs(http.MethodPost, "/api/v2/task/validate", "application/x-yaml", strings.Replace(tekton, "name: say\n", "name: tour-say\n", 1))
	require.Equal(t, gone, code, "%v", out)
	tr.must(created, http.MethodPost, "/api/v2/task", global)
	tr.must(ok, http.MethodGet, "/api/v2/task/tour-say", "")
	tr.must(ok, http.MethodPut, "/api/v2/task/tour-say", global)
	tr.must(ok, http.MethodGet, "/api/v2/task/tour-say/changelog", "")

	// A workflow: saved, versioned, drawn as a canvas, exported, duplicated.
	workflow := `{"name":"pipeline","params":[{"name":"who","type":"text","default":"world"}],"tasks":[
		{"name":"start","type":"start"},
		{"name":"say","type":"template","taskRef":"tour/say","params":[{"name":"word","value":"$(team.params.greeting)"}],"dependencies":[{"taskRef":"start"}]},
		{"name":"record","type":"setwfproperty","params":[{"name":"output","value":"said"},{"name":"value","value":"$(tasks.say.results.said) $(params.who)"}],"dependencies":[{"taskRef":"say"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"record"}]}]}`
	require.Eventually(t, func() bool {
		code, _ := tr.send(http.MethodPost, "/api/v2/team/tour/workflow", workflow)
		return code == created
	}, 30*time.Second, 20*time.Millisecond)
	tr.must(ok, http.MethodGet, "/api/v2/team/tour/workflow/pipeline", "")
	tr.must(ok, http.MethodPut, "/api/v2/team/tour/workflow", strings.Replace(workflow, `"world"`, `"everyone"`, 1))
	canvas := tr.must(ok, http.MethodGet, "/api/v2/team/tour/workflow/pipeline/compose", "")
	raw, err := json.Marshal(canvas)
	require.NoError(t, err)
	tr.must(ok, http.MethodPut, "/api/v2/team/tour/workflow/pipeline/compose", string(raw))
	tr.must(ok, http.MethodGet, "/api/v2/team/tour/workflow/pipeline/export", "")
	tr.must(ok, http.MethodGet, "/api/v2/team/tour/workflow/pipeline/available-parameters", "")
	tr.must(ok, http.MethodGet, "/api/v2/team/tour/workflow/pipeline/changelog", "")
	tr.must(created, http.MethodPost, "/api/v2/team/tour/workflow/pipeline/duplicate", "")
	tr.must(ok, http.MethodGet, "/api/v2/team/tour/workflow/query", "")
	tr.must(gone, http.MethodDelete, "/api/v2/team/tour/workflow/pipeline-copy", "")

	// Templates.
	template := strings.Replace(strings.Replace(workflow, `"pipeline"`, `"tour-template"`, 1), `"tour/say"`, `"tour-say"`, 1)
	tr.must(created, http.MethodPost, "/api/v2/workflowtemplate", template)
	tr.must(ok, http.MethodGet, "/api/v2/workflowtemplate/tour-template", "")
	tr.must(gone, http.MethodDelete, "/api/v2/workflowtemplate/tour-template", "")

	// Runs: submitted with params as a list, read, searched, counted, its log read.
	run := tr.must(created, http.MethodPost, "/api/v2/team/tour/workflow/pipeline/submit?start=true",
		`{"params":[{"name":"who","value":"Baton"}],"labels":{"ci":"yes"}}`)
	id := field(t, run, "id")
	var done any
	require.Eventually(t, func() bool {
		_, done = tr.send(http.MethodGet, "/api/v2/team/tour/workflowrun/"+id, "")
		return field(t, done, "phase") == "completed"
	}, time.Minute, 50*time.Millisecond)
	require.Equal(t, "succeeded", field(t, done, "status"), "%v", done)
	tr.must(ok, http.MethodGet, "/api/v2/team/tour/workflowrun/query?labels=ci%3Dyes", "")
	tr.must(ok, http.MethodGet, "/api/v2/team/tour/workflowrun/count", "")
	say := done.(map[string]any)["tasks"].([]any)[1]
	tr.must(ok, http.MethodGet, "/api/v2/taskrun/"+field(t, say, "id")+"/log", "")
	tr.must(ok, http.MethodPut, "/api/v2/team/tour/workflowrun/"+id+"/finalize", "")
	tr.must(ok, http.MethodGet, "/api/v2/team/tour/insights", "")

	// A run that waits, cancelled, then retried; one that is queued, started.
	slow := `{"name":"slow","tasks":[{"name":"start","type":"start"},
		{"name":"wait","type":"sleep","params":[{"name":"duration","value":600000}],"dependencies":[{"taskRef":"start"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"wait"}]}]}`
	tr.must(created, http.MethodPost, "/api/v2/team/tour/workflow", slow)
	waiting := field(t, tr.must(created, http.MethodPost, "/api/v2/team/tour/workflow/slow/submit?start=true", `{}`), "id")
	tr.must(ok, http.MethodDelete, "/api/v2/team/tour/workflowrun/"+waiting+"/cancel", "")
	retried := field(t, tr.must(created, http.MethodPut, "/api/v2/team/tour/workflowrun/"+waiting+"/retry", `{"fromFailure":false}`), "id")
	tr.must(ok, http.MethodDelete, "/api/v2/team/tour/workflowrun/"+retried+"/cancel", "")
	queued := field(t, tr.must(created, http.MethodPost, "/api/v2/team/tour/workflow/slow/submit", `{"params":{"unused":1}}`), "id")
	code, _ = tr.send(http.MethodPut, "/api/v2/team/tour/workflowrun/"+queued+"/start", `{"labels":{"now":"yes"}}`)
	require.Contains(t, []int{ok, http.StatusConflict}, code, "started, or already started by the engine")
	tr.must(ok, http.MethodDelete, "/api/v2/team/tour/workflowrun/"+queued+"/cancel", "")

	// Tokens.
	token := tr.must(created, http.MethodPost, "/api/v2/token", `{"type":"team","name":"ci","principal":"tour","permissions":["**/read"]}`)
	tr.must(ok, http.MethodDelete, "/api/v2/token/"+field(t, token, "id"), "")

	// And away.
	tr.must(gone, http.MethodDelete, "/api/v2/team/tour/workflow/slow?force=true", "")
	tr.must(gone, http.MethodDelete, "/api/v2/team/tour?force=true", "")
}

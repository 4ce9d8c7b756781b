package standalone_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIntegrationV4Client drives Baton as a script written for Boomerang v4 does: it
// writes parameters as `key`/`defaultValue`, addresses the workflow by its `id` for reads,
// the canvas, submit and run searches, reads who started a run as `initiatedByRef`, and
// reads its teams from the profile as team summaries.
func TestIntegrationV4Client(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	code, team := b.call(t, http.MethodPost, "/api/v2/team", b.token,
		`{"name":"v4","displayName":"V4 Team","labels":{"tier":"2"},"members":[{"email":"alice@example.com","role":"editor"}]}`)
	require.Equal(t, http.StatusCreated, code, team)
	var aliceID string
	for _, m := range team["members"].([]any) {
		if m := m.(map[string]any); m["email"] == "alice@example.com" {
			aliceID = m["id"].(string)
		}
	}
	require.NotEmpty(t, aliceID, team)
	code, minted := b.call(t, http.MethodPost, "/api/v2/token", b.token,
		fmt.Sprintf(`{"type":"user","name":"v4-script","principal":%q,"permissions":["**/**"]}`, aliceID))
	require.Equal(t, http.StatusCreated, code, minted)
	alice := minted["token"].(string)

	workflow := `{"name":"greet","params":[{"key":"who","type":"text","defaultValue":"world"}],"tasks":[
		{"name":"start","type":"start"},
		{"name":"say","type":"setwfproperty","params":[{"name":"output","value":"greeting"},{"name":"value","value":"hello $(params.who)"}],"dependencies":[{"taskRef":"start"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"say"}]}]}`
	var created map[string]any
	require.Eventually(t, func() bool {
		code, created = b.call(t, http.MethodPost, "/api/v2/team/v4/workflow", alice, workflow)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond, "create: %v", created)
	id, _ := created["id"].(string)
	require.NotEmpty(t, id, created)

	code, read := b.call(t, http.MethodGet, "/api/v2/team/v4/workflow/"+id, alice, "")
	require.Equal(t, http.StatusOK, code, read)
	assert.Equal(t, "greet", read["name"])
	assert.Equal(t, id, read["id"])
	param := read["params"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{"name": "who", "key": "who", "label": "who", "type": "text", "default": "world",
		"defaultValue": "world", "required": false, "readOnly": false, "hiddenValue": false}, param)

	code, canvas := b.call(t, http.MethodGet, "/api/v2/team/v4/workflow/"+id+"/compose", alice, "")
	require.Equal(t, http.StatusOK, code, canvas)
	assert.Equal(t, id, canvas["id"])
	assert.Equal(t, "who", canvas["config"].([]any)[0].(map[string]any)["key"])

	code, run := b.call(t, http.MethodPost, "/api/v2/team/v4/workflow/"+id+"/submit?start=true", alice, "")
	require.Equal(t, http.StatusCreated, code, run)
	assert.Equal(t, aliceID, run["initiatedByRef"])
	assert.NotEmpty(t, run["initiatedByUserName"])
	runID := run["id"].(string)
	var done map[string]any
	require.Eventually(t, func() bool {
		_, done = b.call(t, http.MethodGet, "/api/v2/team/v4/workflowrun/"+runID, alice, "")
		return done["phase"] == "completed"
	}, 60*time.Second, 50*time.Millisecond)
	require.Equal(t, "succeeded", done["status"], done)
	assert.Equal(t, "hello world", namedValue(done["results"], "greeting"), "the v4 defaultValue is the default")
	assert.Equal(t, aliceID, done["initiatedByRef"])

	require.Eventually(t, func() bool {
		code, page := b.call(t, http.MethodGet, "/api/v2/team/v4/workflowrun/query?workflows="+id, alice, "")
		return code == http.StatusOK && page["totalElements"] == float64(1)
	}, 10*time.Second, 20*time.Millisecond, "the run search names the workflow by id")

	for _, path := range []string{"/api/v2/profile", "/api/v2/user/profile"} {
		code, prof := b.call(t, http.MethodGet, path, alice, "")
		require.Equal(t, http.StatusOK, code, prof)
		teams := prof["teams"].([]any)
		require.Len(t, teams, 1, path)
		summary := teams[0].(map[string]any)
		assert.Equal(t, "v4", summary["name"], path)
		assert.Equal(t, "V4 Team", summary["displayName"], path)
		assert.Equal(t, "active", summary["status"], path)
		assert.Equal(t, map[string]any{"tier": "2"}, summary["labels"], path)
		assert.Equal(t, "editor", summary["role"], path)
		assert.NotEmpty(t, summary["creationDate"], path)
		assert.Equal(t, map[string]any{"workflows": float64(1), "members": float64(1), "actions": float64(0)}, summary["insights"], path)
	}
}

// namedValue reads a value from run params or results: a list of {name, value}, or a map.
func namedValue(v any, name string) any {
	switch vs := v.(type) {
	case map[string]any:
		return vs[name]
	case []any:
		for _, item := range vs {
			if m, ok := item.(map[string]any); ok && m["name"] == name {
				return m["value"]
			}
		}
	}
	return nil
}

// TestIntegrationV4ClientPages drives the calls of the v4 web UI's pages that read more
// than the contract's names: the workflow editor and the run page (compose nodes looked
// up by taskRef), the editor's Configure tab (every trigger, the team's code-host
// installation), the actions page (approvalsRequired, teamName, and an approval with a
// comment keyed by the action's id), insights (runs counted by workflowRef, filtered by
// workflow id), the team list (usage counts) and integrations (icons as URLs).
func TestIntegrationV4ClientPages(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	code, team := b.call(t, http.MethodPost, "/api/v2/team", b.token,
		`{"name":"v4ui","members":[{"email":"bea@example.com","role":"owner"}]}`)
	require.Equal(t, http.StatusCreated, code, team)
	beaID := team["members"].([]any)[0].(map[string]any)["id"].(string)
	code, minted := b.call(t, http.MethodPost, "/api/v2/token", b.token,
		fmt.Sprintf(`{"type":"user","name":"v4-ui","principal":%q,"permissions":["**/**"]}`, beaID))
	require.Equal(t, http.StatusCreated, code, minted)
	bea := minted["token"].(string)

	workflow := `{"name":"ship","triggers":{"webhook":{"enabled":true}},"tasks":[
		{"name":"start","type":"start"},
		{"name":"approve","type":"approval","params":[{"name":"instructions","value":"Look first."}],"dependencies":[{"taskRef":"start"}]},
		{"name":"note","type":"setwfproperty","params":[{"name":"output","value":"shipped"},{"name":"value","value":"yes"}],"dependencies":[{"taskRef":"approve"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"note"}]}]}`
	var created map[string]any
	require.Eventually(t, func() bool {
		code, created = b.call(t, http.MethodPost, "/api/v2/team/v4ui/workflow", bea, workflow)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond, "create: %v", created)
	id := created["id"].(string)

	// The editor and the run page: every node of a system type names its catalogue task
	// and that task's version; start and end name none.
	var canvas map[string]any
	assert.Eventually(t, func() bool {
		code, canvas = b.call(t, http.MethodGet, "/api/v2/team/v4ui/workflow/"+id+"/compose", bea, "")
		return code == http.StatusOK && nodeData(canvas, "approve")["taskVersion"] != nil
	}, 30*time.Second, 50*time.Millisecond, "compose: %v", canvas)
	require.Equal(t, http.StatusOK, code, canvas)
	for _, tc := range []struct{ node, ref string }{{"approve", "manual-approval"}, {"note", "set-result-parameter"}, {"start", ""}, {"end", ""}} {
		data := nodeData(canvas, tc.node)
		if tc.ref == "" {
			assert.NotContains(t, data, "taskRef", tc.node)
			continue
		}
		assert.Equal(t, tc.ref, data["taskRef"], tc.node)
		assert.Equal(t, float64(1), data["taskVersion"], tc.node)
	}
	worker := `{"name":"hand-off","tasks":[{"name":"start","type":"start"},
		{"name":"work","type":"generic","params":[{"name":"queue","value":"builds"}],"dependencies":[{"taskRef":"start"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"work"}]}]}`
	code, out := b.call(t, http.MethodPost, "/api/v2/team/v4ui/workflow", bea, worker)
	require.Equal(t, http.StatusCreated, code, out)
	code, out = b.call(t, http.MethodGet, "/api/v2/team/v4ui/workflow/hand-off/compose", bea, "")
	require.Equal(t, http.StatusOK, code, out)
	assert.Equal(t, "send-to-worker", nodeData(out, "work")["taskRef"])
	raw, err := json.Marshal(canvas)
	require.NoError(t, err)
	code, saved := b.call(t, http.MethodPut, "/api/v2/team/v4ui/workflow/"+id+"/compose", bea, string(raw))
	require.Equal(t, http.StatusOK, code, "the canvas as read is saved again: %v", saved)
	assert.Equal(t, "manual-approval", nodeData(saved, "approve")["taskRef"])

	// The Configure tab: every trigger kind, each with its conditions.
	code, read := b.call(t, http.MethodGet, "/api/v2/team/v4ui/workflow/"+id, bea, "")
	require.Equal(t, http.StatusOK, code, read)
	none := []any{}
	assert.Equal(t, map[string]any{
		"manual":   map[string]any{"enabled": true, "conditions": none},
		"schedule": map[string]any{"enabled": false, "conditions": none},
		"webhook":  map[string]any{"enabled": true, "conditions": none},
		"event":    map[string]any{"enabled": false, "conditions": none},
		"codehost": map[string]any{"enabled": false, "conditions": none},
		"github":   map[string]any{"enabled": false, "conditions": none},
	}, read["triggers"])
	code, out = b.call(t, http.MethodGet, "/api/v2/integration/github/installation?team=v4ui", bea, "")
	assert.Equal(t, http.StatusNotFound, code, "no installation is linked: %v", out)
	assert.Equal(t, "INTEGRATION_NOT_LINKED", out["reason"])

	code, run := b.call(t, http.MethodPost, "/api/v2/team/v4ui/workflow/"+id+"/submit", bea, "")
	require.Equal(t, http.StatusCreated, code, run)
	runID := run["id"].(string)

	// Insights: runs counted by workflowRef, filtered by the workflow's id.
	code, in := b.call(t, http.MethodGet, "/api/v2/team/v4ui/insights", bea, "")
	require.Equal(t, http.StatusOK, code, in)
	require.Len(t, in["runs"], 1)
	assert.Equal(t, "ship", in["runs"].([]any)[0].(map[string]any)["workflowRef"])
	code, in = b.call(t, http.MethodGet, "/api/v2/team/v4ui/insights?workflows="+id, bea, "")
	require.Equal(t, http.StatusOK, code, in)
	assert.Equal(t, float64(1), in["totalRuns"], "the filter names the workflow by id")

	// The team list counts as the team's own page does.
	code, own := b.call(t, http.MethodGet, "/api/v2/team/v4ui", bea, "")
	require.Equal(t, http.StatusOK, code, own)
	quotas := own["quotas"].(map[string]any)
	require.Equal(t, float64(2), quotas["currentWorkflowCount"], quotas)
	require.Equal(t, float64(1), quotas["currentRuns"], quotas)
	code, found := b.call(t, http.MethodGet, "/api/v2/team/query", bea, "")
	require.Equal(t, http.StatusOK, code, found)
	require.Len(t, found["content"], 1)
	listed := found["content"].([]any)[0].(map[string]any)["quotas"].(map[string]any)
	for _, k := range []string{"currentWorkflowCount", "currentRuns"} {
		assert.Equal(t, quotas[k], listed[k], k)
	}

	// Integrations: each icon is an image's URL.
	var list []map[string]any
	code = b.callJSON(t, http.MethodGet, "/api/v2/integration?team=v4ui", bea, "", &list)
	require.Equal(t, http.StatusOK, code)
	require.NotEmpty(t, list)
	for _, in := range list {
		icon, _ := in["icon"].(string)
		u, err := url.Parse(icon)
		require.NoError(t, err, in["id"])
		assert.Equal(t, "data", u.Scheme, "%s: %s", in["id"], icon)
		assert.True(t, strings.HasPrefix(icon, "data:image/svg+xml;base64,"), "%s: %s", in["id"], icon)
	}

	// The Configure tab again, once the code host told of an installation an admin linked
	// to the team: its account, repositories and events.
	var settings []any
	code = b.callJSON(t, http.MethodPut, "/api/v2/settings", b.token, `[{"key":"codehost","config":[{"key":"webhookSecret","value":"`+codehostSecret+`"}]}]`, &settings)
	require.Equal(t, http.StatusOK, code)
	const installation = 4242
	var doc map[string]any
	require.NoError(t, json.Unmarshal(codehostExample(t, "installation-created", installation, time.Now()), &doc))
	doc["installation"].(map[string]any)["events"] = []string{"push", "pull_request"}
	delivery, err := json.Marshal(doc)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		code, out = b.deliver(t, "installation", "v4-1", codehostSecret, delivery)
		return code == http.StatusOK
	}, 10*time.Second, 100*time.Millisecond, "%v", out)
	code, out = b.call(t, http.MethodPost, "/api/v2/integration/codehost/link", b.token, fmt.Sprintf(`{"installationId":%d,"team":"v4ui"}`, installation))
	require.Equal(t, http.StatusOK, code, out)
	code, out = b.call(t, http.MethodGet, "/api/v2/integration/github/installation?team=v4ui", bea, "")
	if assert.Equal(t, http.StatusOK, code, out) {
		assert.Equal(t, float64(installation), out["installationId"])
		assert.Equal(t, "v4ui", out["team"])
		assert.Equal(t, "Codertocat", out["orgSlug"])
		assert.Equal(t, []any{"push", "pull_request"}, out["events"])
		assert.NotEmpty(t, out["repositories"])
	}

	// The actions page: the approval, with approvalsRequired and teamName.
	var action map[string]any
	require.Eventually(t, func() bool {
		code, page := b.call(t, http.MethodGet, "/api/v2/team/v4ui/action/query?statuses=submitted", bea, "")
		if code != http.StatusOK || page["totalElements"] != float64(1) {
			return false
		}
		action = page["content"].([]any)[0].(map[string]any)
		return true
	}, 30*time.Second, 50*time.Millisecond)
	actionID := action["id"].(string)
	assert.NotContains(t, actionID, ".")
	assert.Equal(t, float64(1), action["approvalsRequired"])
	assert.Equal(t, "v4ui", action["teamName"])
	if n := strings.TrimPrefix(actionID, runID+"-"); n != actionID {
		// The id actions were made with before, <run id>.<n>-<attempt>, is still accepted.
		code, byOld := b.call(t, http.MethodGet, "/api/v2/team/v4ui/action/"+runID+"."+n, bea, "")
		require.Equal(t, http.StatusOK, code, byOld)
		assert.Equal(t, actionID, byOld["id"])
	}

	// The approval modal names its comment field `${id}.comments` and sends one item per
	// key of the form's values: the field path's first segment, which is the whole id only
	// when the id holds no dot.
	key, _, _ := strings.Cut(actionID+".comments", ".")
	code, out = b.call(t, http.MethodPut, "/api/v2/team/v4ui/action", bea,
		fmt.Sprintf(`[{"id":%q,"approved":true,"comments":"Looks right."}]`, key))
	require.Equal(t, http.StatusNoContent, code, "approving with a comment: %v", out)
	var done map[string]any
	require.Eventually(t, func() bool {
		_, done = b.call(t, http.MethodGet, "/api/v2/team/v4ui/workflowrun/"+runID, bea, "")
		return done["phase"] == "completed"
	}, 60*time.Second, 50*time.Millisecond)
	require.Equal(t, "succeeded", done["status"], done)
	code, decided := b.call(t, http.MethodGet, "/api/v2/team/v4ui/action/"+actionID, bea, "")
	require.Equal(t, http.StatusOK, code, decided)
	assert.Equal(t, "Looks right.", decided["actioners"].([]any)[0].(map[string]any)["comments"])
}

// nodeData is the data of the canvas node of task name.
func nodeData(canvas map[string]any, name string) map[string]any {
	nodes, _ := canvas["nodes"].([]any)
	for _, n := range nodes {
		data, _ := n.(map[string]any)["data"].(map[string]any)
		if data["name"] == name {
			return data
		}
	}
	return nil
}

package workflows_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// everyType is a workflow using every task type and every kind of edge: always, success,
// failure, decision patterns and the decision's default branch, with designer extras on
// tasks and dependencies.
func everyType() map[string]any {
	dep := func(ref string, kv ...string) map[string]any {
		d := map[string]any{"taskRef": ref}
		for i := 0; i+1 < len(kv); i += 2 {
			d[kv[i]] = kv[i+1]
		}
		return d
	}
	pos := func(x, y int) map[string]any {
		return map[string]any{"baton.io/position": map[string]any{"x": x, "y": y}}
	}
	t := func(name, typ string, x int, deps []any, kv ...string) map[string]any {
		out := map[string]any{"name": name, "type": typ, "annotations": pos(x, 100)}
		if deps != nil {
			out["dependencies"] = deps
		}
		if len(kv) > 0 {
			out["params"] = params(kv...)
		}
		return out
	}
	tpl := t("fetch", "template", 1, []any{dep("start")}, "url", "$(params.base)/health")
	tpl["taskRef"] = "http-request"
	tpl["retries"] = 2
	tpl["uiColor"] = "teal"
	decide := t("decide", "decision", 2, []any{dep("fetch", "executionCondition", "success")}, "value", "$(tasks.fetch.results.status)")
	setprop := t("record", "setwfproperty", 4, []any{dep("container"), dep("shell", "executionCondition", "always"), dep("queue")}, "output", "code", "value", "$(tasks.fetch.results.status)")
	setprop["join"] = "any"
	return map[string]any{
		"name": "everything", "description": "all task types",
		"params": []any{map[string]any{"name": "base", "type": "url", "default": "https://example.com"}},
		"tasks": []any{
			t("start", "start", 0, nil),
			tpl,
			decide,
			t("container", "custom", 3, []any{dep("decide", "decisionCondition", "2\\d\\d", "label", "ok")}, "image", "alpine:3", "script", "echo ok"),
			t("shell", "script", 3, []any{dep("decide", "decisionCondition", "4\\d\\d\n5\\d\\d")}, "script", "echo fail", "shell", "bash"),
			t("queue", "generic", 3, []any{dep("decide")}, "queue", "workers"),
			setprop,
			t("verdict", "setwfstatus", 5, []any{dep("record")}, "status", "succeeded"),
			t("nap", "sleep", 6, []any{dep("verdict", "executionCondition", "failure")}, "duration", "1000"),
			t("ask", "approval", 7, []any{dep("nap")}, "numberOfApprovers", "2", "instructions", "Ship?"),
			t("do", "manual", 8, []any{dep("ask")}, "instructions", "Do it by hand"),
			t("wait", "eventwait", 9, []any{dep("do")}, "topic", "deployed"),
			t("lock", "acquirelock", 10, []any{dep("wait")}, "key", "prod", "timeout", "60"),
			t("unlock", "releaselock", 11, []any{dep("lock")}, "key", "prod"),
			t("child", "runworkflow", 12, []any{dep("unlock")}, "workflowRef", "child", "wait", "true"),
			t("later", "runscheduledworkflow", 13, []any{dep("child")}, "workflowRef", "child", "futureIn", "2", "futurePeriod", "days"),
			t("end", "end", 14, []any{dep("later")}),
		},
	}
}

// workflow → canvas → workflow gives the tasks back unchanged.
func TestCanvasRoundTripFromWorkflow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	saved := f.must(t, http.StatusCreated, editor, http.MethodPost, base, everyType()).body

	canvas := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/everything/compose", nil).body
	assert.NotContains(t, canvas, "tasks")
	assert.NotContains(t, canvas, "params")
	assert.Equal(t, saved["params"], canvas["config"])
	nodes, edges := canvas["nodes"].([]any), canvas["edges"].([]any)
	require.Len(t, nodes, 17)
	require.Len(t, edges, 18)
	fetch := nodes[1].(map[string]any)
	assert.Equal(t, "fetch", fetch["id"])
	assert.Equal(t, "template", fetch["type"])
	assert.Equal(t, map[string]any{"x": float64(1), "y": float64(100)}, fetch["position"])
	data := fetch["data"].(map[string]any)
	assert.Equal(t, "http-request", data["taskRef"])
	assert.EqualValues(t, 2, data["taskVersion"])
	assert.Equal(t, "teal", data["uiColor"])
	assert.NotContains(t, data, "annotations", "the position is the node's, not its data's")
	edge := findEdge(t, edges, "decide", "container")
	assert.Equal(t, "decision", edge["type"])
	assert.Equal(t, map[string]any{"decisionCondition": "2\\d\\d", "label": "ok"}, edge["data"])
	assert.Equal(t, map[string]any{"executionCondition": "failure"}, findEdge(t, edges, "verdict", "nap")["data"])

	// The canvas sent back as read is the workflow as saved: no new version.
	same := f.must(t, http.StatusOK, editor, http.MethodPut, base+"/everything/compose", canvas).body
	assert.EqualValues(t, 1, same["version"], "the round trip changes nothing")
	first := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/everything?version=1", nil).body
	assert.Equal(t, definition(saved), definition(first))

	// A change makes version 2, its tasks as they were.
	canvas["description"] = "moved"
	v2 := f.must(t, http.StatusOK, editor, http.MethodPut, base+"/everything/compose", canvas).body
	assert.EqualValues(t, 2, v2["version"])
	second := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/everything?version=2", nil).body
	assert.JSONEq(t, js(t, first["tasks"]), js(t, second["tasks"]))
	assert.Equal(t, "moved", second["description"])

	// ?version= is honoured, and replace overwrites in place.
	assert.EqualValues(t, 1, f.must(t, http.StatusOK, reader, http.MethodGet, base+"/everything/compose?version=1", nil).body["version"])
	canvas["description"] = "moved again"
	replaced := f.must(t, http.StatusOK, editor, http.MethodPut, base+"/everything/compose?replace=true", canvas).body
	assert.EqualValues(t, 2, replaced["version"])
}

// canvas → workflow → canvas gives the canvas back: node ids, edge ids and types that
// differ from the derived ones, and extras in node and edge data, survive.
func TestCanvasRoundTripFromCanvas(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	give := `{"name":"drawn","displayName":"Drawn","config":[{"name":"who","type":"text","required":true,"readOnly":false,"hiddenValue":false}],
	"theme":"dark",
	"nodes":[
	 {"id":"n-start","type":"start","position":{"x":0,"y":0},"data":{"name":"start"}},
	 {"id":"n-gate","type":"decision","position":{"x":1,"y":0},"data":{"name":"gate","params":[{"name":"value","value":"$(params.who)"}],"note":"pick"}},
	 {"id":"hello","type":"script","position":{"x":2,"y":0},"data":{"name":"hello","params":[{"name":"script","value":"echo $(params.who)"}],"annotations":{"owner":"me"}}},
	 {"id":"n-end","type":"end","position":{"x":3,"y":0},"data":{"name":"end"}}],
	"edges":[
	 {"id":"e1","source":"n-start","target":"n-gate","type":"smoothstep","data":{"executionCondition":"always"}},
	 {"id":"n-gate-hello","source":"n-gate","target":"hello","type":"decision","data":{"decisionCondition":"alice|bob","label":"known"}},
	 {"id":"e3","source":"n-gate","target":"n-end","type":"decision","data":{}},
	 {"id":"hello-n-end","source":"hello","target":"n-end","type":"default","data":{"executionCondition":"success"}}]}`
	created := f.must(t, http.StatusCreated, editor, http.MethodPut, base+"/drawn/compose", give)
	assert.Equal(t, base+"/drawn", created.header.Get("Location"))
	got := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/drawn/compose", nil).body

	var want map[string]any
	require.NoError(t, json.Unmarshal([]byte(give), &want))
	// Nodes of system types are answered with their type's catalogue task, which v4's
	// designer looks them up by (this catalogue has neither, so no version is answered).
	nodes := want["nodes"].([]any)
	nodes[1].(map[string]any)["data"].(map[string]any)["taskRef"] = "switch"
	nodes[2].(map[string]any)["data"].(map[string]any)["taskRef"] = "execute-shell"
	assert.JSONEq(t, js(t, want["nodes"]), js(t, got["nodes"]))
	assert.ElementsMatch(t, want["edges"], got["edges"])
	// The parameter comes back with v4's names beside Baton's.
	assert.JSONEq(t, `[{"name":"who","key":"who","label":"who","type":"text","required":true,"readOnly":false,"hiddenValue":false}]`, js(t, got["config"]))
	assert.Equal(t, "dark", got["theme"])

	// The workflow form is ordinary: tasks named by their data, dependencies by task name.
	w := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/drawn", nil).body
	hello := w["tasks"].([]any)[2].(map[string]any)
	assert.Equal(t, []any{map[string]any{"taskRef": "gate", "decisionCondition": "alice|bob", "label": "known"}}, hello["dependencies"])

	res := f.must(t, http.StatusBadRequest, editor, http.MethodPut, base+"/drawn/compose",
		`{"nodes":[{"id":"a","type":"start","data":{}}],"edges":[{"id":"x","source":"a","target":"zz","data":{}}]}`)
	assert.Equal(t, "WORKFLOW_INVALID", res.body["reason"])
	assert.Contains(t, string(res.raw), `"field":"edges[0].target"`)
}

func findEdge(t *testing.T, edges []any, source, target string) map[string]any {
	t.Helper()
	for _, e := range edges {
		e := e.(map[string]any)
		if e["source"] == source && e["target"] == target {
			return e
		}
	}
	t.Fatalf("no edge %s → %s", source, target)
	return nil
}

func js(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return string(raw)
}

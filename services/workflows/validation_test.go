package workflows_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// task builds a workflow task; deps name its upstream tasks.
func task(name, typ string, deps ...string) map[string]any {
	t := map[string]any{"name": name, "type": typ}
	if len(deps) > 0 {
		var ds []any
		for _, d := range deps {
			ds = append(ds, map[string]any{"taskRef": d})
		}
		t["dependencies"] = ds
	}
	return t
}

// with sets key on a copy of t.
func with(t map[string]any, key string, v any) map[string]any {
	out := map[string]any{}
	for k, val := range t {
		out[k] = val
	}
	out[key] = v
	return out
}

func params(kv ...string) []any {
	var out []any
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, map[string]any{"name": kv[i], "value": kv[i+1]})
	}
	return out
}

func workflow(tasks ...map[string]any) map[string]any {
	ts := make([]any, len(tasks))
	for i, t := range tasks {
		ts[i] = t
	}
	return map[string]any{"name": "checked", "tasks": ts}
}

var (
	start  = task("start", "start")
	script = with(task("a", "script", "start"), "params", params("script", "echo hi"))
	end    = task("end", "end", "a")
)

// Saving checks the whole definition and lists every problem with the field it is in.
func TestValidationOnSave(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	tests := []struct {
		name       string
		give       map[string]any
		wantReason string
		// wantErrors are "field: message fragment" pairs that must all be listed.
		wantErrors []string
	}{
		{"valid", workflow(start, script, end), "", nil},
		{"unique task names", workflow(start, script, with(task("a", "script", "start"), "params", params("script", "x")), end),
			"WORKFLOW_NON_UNIQUE_TASK_NAME", []string{"tasks[2].name: also called 'a'"}},
		{"no start", workflow(with(script, "dependencies", nil), end),
			"WORKFLOW_INVALID", []string{"tasks: exactly one task of type 'start', found 0"}},
		{"two ends", workflow(start, script, end, task("end2", "end", "a")),
			"WORKFLOW_INVALID", []string{"tasks: exactly one task of type 'end', found 2"}},
		{"cycle", workflow(start, with(script, "dependencies", []any{map[string]any{"taskRef": "start"}, map[string]any{"taskRef": "b"}}),
			with(task("b", "script", "a"), "params", params("script", "x")), task("end", "end", "b")),
			"WORKFLOW_INVALID", []string{"tasks[1].dependencies: tasks a → b form a cycle"}},
		{"unreachable from start", workflow(start, script, with(task("lonely", "script"), "params", params("script", "x")), task("end", "end", "a", "lonely")),
			"WORKFLOW_INVALID", []string{"tasks[2]: task 'lonely' cannot be reached from the start task"}},
		{"cannot reach end", workflow(start, script, with(task("dead", "script", "a"), "params", params("script", "x")), end),
			"WORKFLOW_INVALID", []string{"tasks[2]: task 'dead' cannot reach the end task"}},
		{"dependency on a missing task", workflow(start, script, task("end", "end", "a", "lint")),
			"WORKFLOW_INVALID", []string{"tasks[2].dependencies[1].taskRef: no task named 'lint'"}},
		{"start with dependencies", workflow(task("start", "start", "a"), script, end),
			"WORKFLOW_INVALID", []string{"tasks[0].dependencies: the start task cannot depend"}},
		{"unknown taskRef", workflow(start, with(with(task("a", "template", "start"), "taskRef", "nope"), "params", params("url", "u")), end),
			"WORKFLOW_INVALID_TASK_REF", []string{"tasks[1].taskRef: no task 'nope'"}},
		{"inactive task", workflow(start, with(task("a", "template", "start"), "taskRef", "retired"), end),
			"WORKFLOW_INVALID_TASK_REF", []string{"tasks[1].taskRef: task 'retired' version 1 is inactive"}},
		{"unknown task version", workflow(start, with(with(with(task("a", "template", "start"), "taskRef", "http-request"), "taskVersion", 7), "params", params("url", "u")), end),
			"WORKFLOW_INVALID_TASK_REF", []string{"tasks[1].taskRef: no version 7 of task 'http-request'"}},
		{"another team's task", workflow(start, with(task("a", "template", "start"), "taskRef", "other/build"), end),
			"WORKFLOW_INVALID_TASK_REF", []string{"tasks[1].taskRef: 'other/build' may name a global task or a task of team 'infra' only"}},
		{"template without taskRef", workflow(start, task("a", "template", "start"), end),
			"WORKFLOW_INVALID_TASK_REF", []string{"tasks[1].taskRef: a template task must name"}},
		{"unknown task type", workflow(start, task("a", "teleport", "start"), end),
			"WORKFLOW_INVALID", []string{"tasks[1].type: unknown task type 'teleport'"}},
		{"required param of the type", workflow(start, task("a", "script", "start"), end),
			"WORKFLOW_INVALID", []string{"tasks[1].params: a script task needs a value for 'script'"}},
		{"required param of the catalogue task", workflow(start, with(task("a", "template", "start"), "taskRef", "http-request"), end),
			"WORKFLOW_INVALID", []string{"tasks[1].params: task 'http-request' requires a value for 'url'"}},
		{"one of custom's params", workflow(start, task("a", "custom", "start"), end),
			"WORKFLOW_INVALID", []string{"tasks[1].params: a custom task needs a value for one of image, script, command"}},
		{"literal value out of its set", workflow(start, with(task("a", "setwfstatus", "start"), "params", params("status", "great")), end),
			"WORKFLOW_INVALID", []string{"tasks[1].params: 'status' of a setwfstatus task must be one of"}},
		{"a run scheduled in periods", workflow(start, with(task("a", "runscheduledworkflow", "start"), "params",
			params("workflowRef", "nightly", "futureIn", "2", "futurePeriod", "days", "time", "09:00", "timezone", "Europe/Paris")), end), "", nil},
		{"a run scheduled at a time, its workflow named as v4 did", workflow(start, with(task("a", "runscheduledworkflow", "start"), "params",
			params("workflowId", "nightly", "time", "2030-01-01T09:00:00Z")), end), "", nil},
		{"a run scheduled with no time", workflow(start, with(task("a", "runscheduledworkflow", "start"), "params", params("workflowRef", "nightly")), end),
			"WORKFLOW_INVALID", []string{"tasks[1].params: a runscheduledworkflow task needs a value for one of futureIn, time"}},
		{"a run scheduled in years", workflow(start, with(task("a", "runscheduledworkflow", "start"), "params",
			params("workflowRef", "nightly", "futureIn", "2", "futurePeriod", "years")), end),
			"WORKFLOW_INVALID", []string{"tasks[1].params: 'futurePeriod' of a runscheduledworkflow task must be one of minutes, hours, days, weeks, months"}},
		{"malformed reference", workflow(start, with(script, "params", params("script", "echo $(params.)")), end),
			"WORKFLOW_INVALID", []string{"tasks[1].params[0].value: reference '$(params.)' is malformed"}},
		{"unclosed reference", workflow(start, with(script, "params", params("script", "echo $(params.x")), end),
			"WORKFLOW_INVALID", []string{"tasks[1].params[0].value: reference '$(params.x' is not closed"}},
		{"unknown context parameter", workflow(start, with(script, "params", params("script", "$(context.params.nope)")), end),
			"WORKFLOW_INVALID", []string{"tasks[1].params[0].value: reference '$(context.params.nope)' names no context parameter"}},
		{"results of a downstream task", workflow(start, with(script, "params", params("script", "$(tasks.b.results.x)")),
			with(task("b", "script", "a"), "params", params("script", "x")), task("end", "end", "b")),
			"WORKFLOW_INVALID", []string{"tasks[1].params[0].value: reference to results of 'b': only results of upstream tasks"}},
		{"shell substitutions are left alone", workflow(start, with(script, "params", params("script",
			`echo $(date) $(echo $(params.who)) $(params.data["a.b"]) $(tasks.start.results.id) $(results.out.path) $(global.params.region)`)), end),
			"", nil},
		{"bad decision pattern", workflow(start, with(task("d", "decision", "start"), "params", params("value", "x")),
			with(task("a", "script"), "dependencies", []any{map[string]any{"taskRef": "d", "decisionCondition": "ok\n(unclosed"}}),
			end),
			"WORKFLOW_INVALID", []string{"tasks[2].dependencies[0].decisionCondition: '(unclosed' is not a valid RE2 pattern"}},
		{"bad execution condition", workflow(start,
			with(with(task("a", "script"), "params", params("script", "x")), "dependencies", []any{map[string]any{"taskRef": "start", "executionCondition": "sometimes"}}),
			end),
			"WORKFLOW_INVALID", []string{"tasks[1].dependencies[0].executionCondition: must be always, success or failure"}},
		{"several problems at once", workflow(start, task("a", "script", "start"), task("a", "teleport", "start"), task("end", "end", "a", "ghost")),
			"WORKFLOW_INVALID", []string{"tasks[2].name: also called 'a'", "tasks[2].type: unknown task type", "tasks[1].params: a script task needs", "tasks[3].dependencies[1].taskRef: no task named 'ghost'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(t, editor, http.MethodPut, base, tt.give)
			if tt.wantReason == "" {
				require.Contains(t, []int{http.StatusOK, http.StatusCreated}, res.code, string(res.raw))
				return
			}
			require.Equal(t, http.StatusBadRequest, res.code, string(res.raw))
			assert.Equal(t, tt.wantReason, res.body["reason"], string(res.raw))
			var got []string
			for _, e := range res.body["errors"].([]any) {
				e := e.(map[string]any)
				got = append(got, e["field"].(string)+": "+e["message"].(string))
			}
			for _, want := range tt.wantErrors {
				field, fragment, _ := strings.Cut(want, ": ")
				assert.True(t, containsError(got, field, fragment), "want %q among %q", want, got)
			}
		})
	}
}

func containsError(got []string, field, fragment string) bool {
	for _, g := range got {
		if strings.HasPrefix(g, field+": ") && strings.Contains(g, fragment) {
			return true
		}
	}
	return false
}

// Names are slugs: free text slugs on create, reserved names and mismatches are refused.
func TestNames(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	tests := []struct {
		name     string
		method   string
		path     string
		give     map[string]any
		wantCode int
		wantName string
	}{
		{"free text becomes a slug", http.MethodPost, base, with(workflow(start, script, end), "name", "Build & Deploy_v2"), 201, "build--deploy-v2"},
		{"reserved", http.MethodPost, base, with(workflow(start, script, end), "name", "query"), 400, ""},
		{"no letters", http.MethodPost, base, with(workflow(start, script, end), "name", "!!!"), 400, ""},
		{"compose with another name", http.MethodPut, base + "/alpha/compose", map[string]any{"name": "beta", "nodes": []any{}}, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.must(t, tt.wantCode, editor, tt.method, tt.path, tt.give)
			if tt.wantCode >= 400 {
				assert.Equal(t, "WORKFLOW_INVALID_REQ", res.body["reason"])
				return
			}
			assert.Equal(t, tt.wantName, res.body["name"])
		})
	}
}

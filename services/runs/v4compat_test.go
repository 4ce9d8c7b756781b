package runs_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/workflowid"
)

// A v4 client submits a workflow by its id, finds its runs by that id, and reads who
// started a run as initiatedByRef and initiatedByUserName; the workflow's parameters may
// be written with v4's names (`key`, `defaultValue`).
func TestV4Clients(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	def := chain("greet", prop("a", "greeting", "hello $(params.who)"))
	def["params"] = []map[string]any{{"key": "who", "type": "text", "defaultValue": "world"}}
	f.defs.put("infra", def)
	id := workflowid.Of("infra", "greet")

	run := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/"+id+"/submit?start=true", nil).body
	assert.Equal(t, "succeeded", run["status"], run["statusMessage"])
	assert.Equal(t, "greet", run["workflowRef"])
	assert.Equal(t, "hello world", valueOf(t, run["results"], "greeting"), "the v4 defaultValue is the default")
	assert.Equal(t, "u-owner", run["initiatedByRef"])
	assert.Equal(t, "Olive Owner", run["initiatedByUserName"])
	assert.Equal(t, map[string]any{"type": "user", "id": "u-owner", "name": "Olive Owner"}, run["initiatedBy"])
	read := f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/"+run["id"].(string), nil).body
	assert.Equal(t, "u-owner", read["initiatedByRef"])
	assert.Equal(t, "Olive Owner", read["initiatedByUserName"])

	token := auth.Principal{Type: auth.TypeWorkflow, ID: "infra/greet", Name: "ci", Team: "infra", Workflow: "greet",
		TokenID: "t1", Permissions: []string{"workflowrun/write", "workflowrun/read"}}
	byToken := f.must(t, http.StatusCreated, token, http.MethodPost, infra+"/workflow/"+id+"/submit", nil).body
	assert.Equal(t, "infra/greet", byToken["initiatedByRef"])
	assert.Equal(t, "ci", byToken["initiatedByUserName"])
	f.waitRun(t, "infra", byToken["id"].(string), completed)

	tests := []struct {
		name, workflows string
		want            int
	}{
		{"by id", id, 2},
		{"by name", "greet", 2},
		{"by team and name", "infra/greet", 2},
		{"by another team's id", workflowid.Of("other", "greet"), 0},
		{"by an id among names", "nope," + id, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/query?workflows="+tt.workflows, nil).body
			assert.EqualValues(t, tt.want, page["totalElements"])
			count := f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/count?workflows="+tt.workflows, nil).body
			assert.EqualValues(t, tt.want, count["status"].(map[string]any)["all"])
		})
	}
	f.must(t, http.StatusNotFound, owner, http.MethodPost, infra+"/workflow/"+workflowid.Of("other", "greet")+"/submit", nil)

	// A runworkflow task may name its child by id too, of its own team only.
	kid := func(ref string) map[string]any {
		return map[string]any{"name": "kid", "type": "runworkflow", "params": []map[string]any{{"name": "workflowRef", "value": ref}}}
	}
	f.defs.put("infra", chain("parent", kid(id)))
	f.defs.put("infra", chain("stray", kid(workflowid.Of("other", "greet"))))
	parent := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/parent/submit?start=true", nil).body
	done := f.waitRun(t, "infra", parent["id"].(string), completed)
	assert.Equal(t, "succeeded", done["status"], done["statusMessage"])
	stray := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/stray/submit?start=true", nil).body
	done = f.waitRun(t, "infra", stray["id"].(string), completed)
	assert.Equal(t, "invalid", done["tasks"].([]any)[1].(map[string]any)["status"], done)
}

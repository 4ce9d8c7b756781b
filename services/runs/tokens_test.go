package runs_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
)

// A CI job holding a workflow's token submits a run and polls it: it reads its workflow's
// runs, their task runs and logs, and nothing of the team's other workflows.
func TestWorkflowTokensReadTheirOwnRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.defs.put("infra", chain("build", prop("a", "greeting", "hello")))
	f.defs.put("infra", chain("deploy", prop("a", "greeting", "hello")))
	ci := auth.Principal{Type: auth.TypeWorkflow, ID: "infra/build", Team: "infra", Workflow: "build", TokenID: "t-ci",
		Permissions: []string{"workflowrun/write", "workflowrun/read"}}

	mine := f.must(t, http.StatusCreated, ci, http.MethodPost, infra+"/workflow/build/submit?start=true", map[string]any{}).body
	theirs := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/deploy/submit?start=true", map[string]any{}).body
	f.must(t, http.StatusForbidden, ci, http.MethodPost, infra+"/workflow/deploy/submit", map[string]any{})

	run := f.must(t, http.StatusOK, ci, http.MethodGet, infra+"/workflowrun/"+mine["id"].(string), nil).body
	assert.Equal(t, "build", run["workflowRef"])
	tasks, _ := run["tasks"].([]any)
	require.NotEmpty(t, tasks, "the run's task runs come with it")
	for _, task := range tasks {
		id := task.(map[string]any)["id"].(string)
		f.must(t, http.StatusOK, ci, http.MethodGet, "/api/v2/taskrun/"+id+"/log", nil)
	}

	page := f.must(t, http.StatusOK, ci, http.MethodGet, infra+"/workflowrun/query", nil).body
	assert.EqualValues(t, 1, page["totalElements"], "only its workflow's runs")
	page = f.must(t, http.StatusOK, ci, http.MethodGet, infra+"/workflowrun/query?workflows=build", nil).body
	assert.EqualValues(t, 1, page["totalElements"])
	page = f.must(t, http.StatusOK, ci, http.MethodGet, infra+"/workflowrun/query?workflows=deploy", nil).body
	assert.EqualValues(t, 0, page["totalElements"], "asking for another workflow's runs finds none")
	count := f.must(t, http.StatusOK, ci, http.MethodGet, infra+"/workflowrun/count", nil).body["status"].(map[string]any)
	assert.EqualValues(t, 1, count["all"])

	// Another workflow's run is not there for it, nor its task runs' logs.
	f.must(t, http.StatusNotFound, ci, http.MethodGet, infra+"/workflowrun/"+theirs["id"].(string), nil)
	other := f.must(t, http.StatusOK, owner, http.MethodGet, infra+"/workflowrun/"+theirs["id"].(string), nil).body
	for _, task := range other["tasks"].([]any) {
		id := task.(map[string]any)["id"].(string)
		f.must(t, http.StatusNotFound, ci, http.MethodGet, "/api/v2/taskrun/"+id+"/log", nil)
	}
	// Reading is not acting: moves need workflowrun/action.
	f.must(t, http.StatusForbidden, ci, http.MethodDelete, infra+"/workflowrun/"+mine["id"].(string)+"/cancel", nil)

	tests := []struct {
		name string
		as   auth.Principal
		want int
	}{
		{"a token of the workflow without workflowrun/read", auth.Principal{Type: auth.TypeWorkflow, ID: "infra/build", Team: "infra",
			Workflow: "build", TokenID: "t-w", Permissions: []string{"workflowrun/write"}}, http.StatusForbidden},
		{"a token of a workflow of another team", auth.Principal{Type: auth.TypeWorkflow, ID: "other/build", Team: "other",
			Workflow: "build", TokenID: "t-o", Permissions: []string{"**/**"}}, http.StatusForbidden},
		{"a token of another workflow of the team", auth.Principal{Type: auth.TypeWorkflow, ID: "infra/deploy", Team: "infra",
			Workflow: "deploy", TokenID: "t-d", Permissions: []string{"workflowrun/read"}}, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.must(t, tt.want, tt.as, http.MethodGet, infra+"/workflowrun/"+mine["id"].(string), nil)
		})
	}
}

package workflows_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/workflowid"
)

// A v4 client names parameters `key` with a `defaultValue`, prints `label`, and addresses
// workflows by `id`: what it sends is kept, and it reads its own names back beside Baton's.
func TestV4ParamAliases(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	body := chain("aliases", 1)
	body["params"] = []any{
		map[string]any{"key": "env", "type": "select", "defaultValue": "dev",
			"options": []any{map[string]any{"key": "dev", "value": "Dev"}, map[string]any{"key": "prod", "value": "Prod"}}},
		map[string]any{"name": "retries", "label": "Retries", "type": "number", "default": 3},
	}
	created := f.must(t, http.StatusCreated, editor, http.MethodPost, base, body).body
	read := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/aliases", nil).body
	canvas := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/aliases/compose", nil).body
	for where, params := range map[string]any{"create": created["params"], "read": read["params"], "canvas": canvas["config"]} {
		list, ok := params.([]any)
		require.True(t, ok, "%s: params %v", where, params)
		require.Len(t, list, 2, where)
		env, retries := list[0].(map[string]any), list[1].(map[string]any)
		assert.Equal(t, "env", env["name"], where)
		assert.Equal(t, "env", env["key"], where)
		assert.Equal(t, "env", env["label"], where+": a label left out reads as the name")
		assert.Equal(t, "dev", env["default"], where+": defaultValue kept")
		assert.Equal(t, "dev", env["defaultValue"], where)
		assert.Equal(t, "retries", retries["key"], where)
		assert.Equal(t, "Retries", retries["label"], where)
		assert.EqualValues(t, 3, retries["defaultValue"], where)
	}

	conflicting := chain("conflicting", 1)
	conflicting["params"] = []any{map[string]any{"name": "a", "key": "b"}}
	res := f.must(t, http.StatusBadRequest, editor, http.MethodPost, base, conflicting)
	assert.Contains(t, res.body["message"], "name \"a\" and key \"b\"")
}

func TestWorkflowIDs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	created := f.must(t, http.StatusCreated, editor, http.MethodPost, base, chain("by-id", 1)).body
	id, _ := created["id"].(string)
	require.Equal(t, workflowid.Of("infra", "by-id"), id, "create answers the id")
	f.must(t, http.StatusCreated, outsider, http.MethodPost, "/api/v2/team/other/workflow", chain("by-id", 1))
	otherID := workflowid.Of("other", "by-id")

	canvas := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/by-id/compose", nil).raw
	workflowToken := auth.Principal{Type: auth.TypeWorkflow, ID: "infra/by-id", Team: "infra", Workflow: "by-id",
		TokenID: "t1", Permissions: []string{"workflow/read"}}
	tests := []struct {
		name     string
		who      auth.Principal
		method   string
		path     string
		body     any
		wantCode int
	}{
		{"read", reader, http.MethodGet, base + "/" + id, nil, 200},
		{"read a version", reader, http.MethodGet, base + "/" + id + "?version=1", nil, 200},
		{"canvas", reader, http.MethodGet, base + "/" + id + "/compose", nil, 200},
		{"changelog", reader, http.MethodGet, base + "/" + id + "/changelog", nil, 200},
		{"available parameters", reader, http.MethodGet, base + "/" + id + "/available-parameters", nil, 200},
		{"export", reader, http.MethodGet, base + "/" + id + "/export", nil, 200},
		{"team-less export", reader, http.MethodGet, "/api/v2/workflow/" + id + "/export", nil, 200},
		{"save a canvas", editor, http.MethodPut, base + "/" + id + "/compose", canvas, 200},
		{"duplicate", editor, http.MethodPost, base + "/" + id + "/duplicate", nil, 201},
		{"workflow token reads its workflow by id", workflowToken, http.MethodGet, base + "/" + id, nil, 200},
		{"another team's id in this team's path", admin, http.MethodGet, base + "/" + otherID, nil, 404},
		{"a template's id in a team's path", admin, http.MethodGet, base + "/" + workflowid.Of("", "by-id"), nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(t, tt.who, tt.method, tt.path, tt.body)
			require.Equal(t, tt.wantCode, res.code, string(res.raw))
			if res.code == 200 && res.body["name"] != nil {
				assert.Equal(t, "by-id", res.body["name"])
				assert.Equal(t, id, res.body["id"])
			}
		})
	}

	page := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/query?workflows="+id, nil).body
	content, _ := page["content"].([]any)
	require.Len(t, content, 1, "a query names workflows by id too")
	assert.Equal(t, id, content[0].(map[string]any)["id"])

	// The id is read-only: one sent in a body is ignored, not stored or echoed as an extra.
	body := chain("by-id", 2)
	body["id"] = "wf_forged"
	saved := f.must(t, http.StatusOK, editor, http.MethodPut, base, body).body
	assert.Equal(t, id, saved["id"])

	f.must(t, http.StatusNoContent, owner, http.MethodDelete, base+"/"+id, nil)
	f.must(t, http.StatusNotFound, reader, http.MethodGet, base+"/by-id", nil)
}

func TestTemplateIDs(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	created := f.must(t, http.StatusCreated, admin, http.MethodPost, templates, chain("tpl", 1)).body
	id := workflowid.Of("", "tpl")
	assert.Equal(t, id, created["id"])
	read := f.must(t, http.StatusOK, reader, http.MethodGet, templates+"/"+id, nil).body
	assert.Equal(t, "tpl", read["name"])
	f.must(t, http.StatusNotFound, reader, http.MethodGet, templates+"/"+workflowid.Of("infra", "tpl"), nil)
}

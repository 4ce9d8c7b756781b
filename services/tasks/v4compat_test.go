package tasks_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A task written by a v4 client names its parameters `key` with a `defaultValue`: both are
// kept, as JSON and through Tekton YAML, and answered under both names.
func TestV4ParamAliases(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	body := `{"name":"v4-task","type":"template","spec":{"image":"alpine","script":"echo $(params.target)",
	 "params":[{"key":"target","defaultValue":"prod","type":"text"},{"name":"n","label":"Count","default":2,"type":"number"}]}}`
	r := f.do(t, request{as: editor, method: http.MethodPost, path: "/api/v2/team/infra/task", body: body})
	require.Equal(t, http.StatusCreated, r.code, string(r.raw))

	check := func(where string, task map[string]any) {
		params := task["spec"].(map[string]any)["params"].([]any)
		require.Len(t, params, 2, where)
		target, n := params[0].(map[string]any), params[1].(map[string]any)
		assert.Equal(t, "target", target["name"], where)
		assert.Equal(t, "target", target["key"], where)
		assert.Equal(t, "target", target["label"], where)
		assert.Equal(t, "prod", target["default"], where)
		assert.Equal(t, "prod", target["defaultValue"], where)
		assert.Equal(t, "n", n["key"], where)
		assert.Equal(t, "Count", n["label"], where)
		assert.EqualValues(t, 2, n["defaultValue"], where)
		assert.NotContains(t, target, "uiHint", where)
	}
	check("create", r.json(t))
	check("read", f.do(t, request{as: reader, method: http.MethodGet, path: "/api/v2/team/infra/task/v4-task"}).json(t))

	y := f.do(t, request{as: reader, method: http.MethodGet, path: "/api/v2/team/infra/task/v4-task", accept: yamlType})
	require.Equal(t, http.StatusOK, y.code)
	r = f.do(t, request{as: editor, method: http.MethodPut, path: "/api/v2/team/infra/task/v4-task?replace=true", body: string(y.raw), contentType: yamlType})
	require.Equal(t, http.StatusOK, r.code, string(r.raw))
	check("through YAML", f.do(t, request{as: reader, method: http.MethodGet, path: "/api/v2/team/infra/task/v4-task"}).json(t))

	code, res := f.call(t, editor, http.MethodPost, "/api/v2/team/infra/task",
		`{"name":"clash","type":"template","spec":{"image":"alpine","params":[{"name":"a","default":"x","defaultValue":"y"}]}}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, res["message"], "default")
}

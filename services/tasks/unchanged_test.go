package tasks_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A PUT of what the latest version holds already writes nothing and answers that
// version, however it is spelled; any change makes a version; a dry run answers what
// would be saved, validated, and saves nothing.
func TestSavingTheLatestVersionAgainMakesNoVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const path = "/api/v2/team/infra/task/deploy"
	version := func() float64 {
		t.Helper()
		code, got := f.call(t, reader, http.MethodGet, path, "")
		require.Equal(t, http.StatusOK, code, got)
		return got["version"].(float64)
	}

	// A dry run of a new task answers version 1 and creates nothing.
	r := f.do(t, request{as: editor, method: http.MethodPut, path: path + "?dryRun=true",
		body: `{"description":"Deploys","spec":{"image":"alpine","script":"deploy"}}`})
	require.Equal(t, http.StatusCreated, r.code, string(r.raw))
	assert.Empty(t, r.header.Get("Location"), "nothing was created")
	assert.EqualValues(t, 1, r.json(t)["version"])
	code, _ := f.call(t, reader, http.MethodGet, path, "")
	assert.Equal(t, http.StatusNotFound, code, "a dry run creates nothing")

	code, v1 := f.call(t, editor, http.MethodPut, path,
		`{"description":"Deploys","labels":{"env":"prod"},"spec":{"image":"alpine","script":"deploy","params":[{"name":"to","type":"text","default":{"a":1,"b":2}}]}}`)
	require.Equal(t, http.StatusCreated, code, v1)

	same := []struct{ name, body string }{
		{"as sent", `{"description":"Deploys","labels":{"env":"prod"},"spec":{"image":"alpine","script":"deploy","params":[{"name":"to","type":"text","default":{"a":1,"b":2}}]}}`},
		{"another spelling", `{"name":"deploy","type":"template","status":"active","description":"Deploys","icon":"","labels":{"env":"prod"},"annotations":{},
			"changelog":{"reason":"again"},"spec":{"script":"deploy","image":"alpine","envs":[],"params":[{"type":"text","name":"to","required":false,"default":{ "b" : 2, "a" : 1 }}]}}`},
		{"as read", mustJSON(t, v1)},
	}
	for _, tt := range same {
		code, got := f.call(t, owner, http.MethodPut, path, tt.body)
		require.Equal(t, http.StatusOK, code, "%s: %v", tt.name, got)
		assert.Equal(t, v1, got, "%s: the latest version, as it was", tt.name)
		code, got = f.call(t, owner, http.MethodPut, path+"?dryRun=true", tt.body)
		require.Equal(t, http.StatusOK, code, "%s: %v", tt.name, got)
		assert.EqualValues(t, 1, got["version"], "%s: a dry run answers the latest version", tt.name)
	}
	assert.EqualValues(t, 1, version(), "nothing saved")

	// A change, dry run first: validated, answered as it would be, saved only without it.
	changed := `{"description":"Deploys","labels":{"env":"prod"},"spec":{"image":"alpine:3","script":"deploy","params":[{"name":"to","type":"text","default":{"a":1,"b":2}}]}}`
	code, got := f.call(t, owner, http.MethodPut, path+"?dryRun=true", `{"spec":{"params":[{"name":"to","type":"nope"}]}}`)
	assert.Equal(t, http.StatusBadRequest, code, "a dry run validates: %v", got)
	code, would := f.call(t, owner, http.MethodPut, path+"?dryRun=true", changed)
	require.Equal(t, http.StatusOK, code, would)
	assert.EqualValues(t, 2, would["version"])
	assert.Equal(t, "alpine:3", would["spec"].(map[string]any)["image"])
	assert.EqualValues(t, 1, version(), "a dry run saves nothing")
	code, v2 := f.call(t, owner, http.MethodPut, path, changed)
	require.Equal(t, http.StatusOK, code, v2)
	assert.EqualValues(t, 2, v2["version"])
	code, again := f.call(t, owner, http.MethodPut, path, changed)
	require.Equal(t, http.StatusOK, code, again)
	assert.EqualValues(t, 2, again["version"])

	// A dry run of a replace answers the latest version's number, saving nothing.
	code, would = f.call(t, owner, http.MethodPut, path+"?dryRun=true&replace=true", `{"spec":{"image":"alpine:4"}}`)
	require.Equal(t, http.StatusOK, code, would)
	assert.EqualValues(t, 2, would["version"])
	code, cur := f.call(t, reader, http.MethodGet, path, "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "alpine:3", cur["spec"].(map[string]any)["image"])

	// The same on the global catalogue.
	const global = "/api/v2/task/notify"
	code, g1 := f.call(t, admin, http.MethodPut, global, `{"spec":{"image":"curl"}}`)
	require.Equal(t, http.StatusCreated, code, g1)
	code, g := f.call(t, admin, http.MethodPut, global, `{"name":"notify","spec":{"image":"curl","command":[]}}`)
	require.Equal(t, http.StatusOK, code, g)
	assert.EqualValues(t, 1, g["version"])
	code, g = f.call(t, admin, http.MethodPut, global, `{"spec":{"image":"curl:8"}}`)
	require.Equal(t, http.StatusOK, code, g)
	assert.EqualValues(t, 2, g["version"])
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return string(raw)
}

package standalone_test

import (
	"fmt"
	"net/http"
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

package standalone_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A value a workflow task gives to its catalogue task's password param is a secret of the
// workflow: every read answers it as `********`, a save sending that answer back keeps it,
// the run's task gets the real value, and no database file or message holds it.
func TestIntegrationTaskPasswordParamStaysSecret(t *testing.T) {
	t.Parallel()
	const key = "t4sk-Param-value-84"
	o := startObserved(t, nil)
	b := o.baton
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"keyed"}`)
	require.Equal(t, http.StatusCreated, code, out)
	code, out = b.call(t, http.MethodPost, "/api/v2/team/keyed/task", b.token, mustJSON(t, map[string]any{
		"name": "signer", "type": "template",
		"spec": map[string]any{
			"image":   "alpine:3",
			"script":  `echo "signing with $(params.key)"; printf '%s' "$(params.key)" | sha256sum | cut -c1-64 > $(results.key.path)`,
			"params":  []any{map[string]any{"name": "key", "type": "password", "required": true}},
			"results": []any{map[string]any{"name": "key"}},
		},
	}))
	require.Equal(t, http.StatusCreated, code, out)
	body := mustJSON(t, map[string]any{
		"name": "signed",
		"tasks": []any{
			map[string]any{"name": "start", "type": "start"},
			map[string]any{"name": "sign", "type": "template", "taskRef": "keyed/signer",
				"params":       []any{map[string]any{"name": "key", "value": key}},
				"dependencies": []any{map[string]any{"taskRef": "start"}}},
			map[string]any{"name": "end", "type": "end", "dependencies": []any{map[string]any{"taskRef": "sign"}}},
		},
	})
	require.Eventually(t, func() bool {
		code, out = b.call(t, http.MethodPost, "/api/v2/team/keyed/workflow", b.token, body)
		require.NotEqual(t, http.StatusBadRequest, code, "%v", out)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)

	reads := []string{
		"/api/v2/team/keyed/workflow/signed", "/api/v2/team/keyed/workflow/signed/compose",
		"/api/v2/team/keyed/workflow/signed/export",
	}
	var answers strings.Builder
	for _, path := range reads {
		got := readAll(t, b, path, b.token)
		assert.Contains(t, got, `{"name":"key","value":"********"}`, path)
		answers.WriteString(got)
	}
	code, out = b.call(t, http.MethodPut, "/api/v2/team/keyed/workflow", b.token, readAll(t, b, reads[0], b.token))
	require.Equal(t, http.StatusOK, code, out)
	require.Equal(t, float64(1), out["version"], "the mask read back is the value kept: nothing changed")
	code, out = b.call(t, http.MethodPut, "/api/v2/team/keyed/workflow", b.token, withDescription(t, readAll(t, b, reads[0], b.token), "again"))
	require.Equal(t, http.StatusOK, code, out)
	require.Equal(t, float64(2), out["version"])

	code, run := b.call(t, http.MethodPost, "/api/v2/team/keyed/workflow/signed/submit?start=true", b.token, `{}`)
	require.Equal(t, http.StatusCreated, code, run)
	id := run["id"].(string)
	var done map[string]any
	require.Eventually(t, func() bool {
		_, done = b.call(t, http.MethodGet, "/api/v2/team/keyed/workflowrun/"+id, b.token, "")
		return done["phase"] == "completed"
	}, 60*time.Second, 50*time.Millisecond)
	require.Equal(t, "succeeded", done["status"], done)
	sign := task(done, "sign")
	assert.Equal(t, map[string]any{"key": sha256Hex(key)}, byName(t, sign["results"]), "the task got the value kept")
	log := readAll(t, b, "/api/v2/taskrun/"+sign["id"].(string)+"/log", b.token)
	assert.Contains(t, log, "signing with ********\n")
	answers.WriteString(readAll(t, b, "/api/v2/team/keyed/workflowrun/"+id, b.token) + log)
	everySecret := map[string]string{"task param": key}
	assertNoSecret(t, "the API's answers", []byte(answers.String()), everySecret)

	require.Eventually(t, func() bool {
		code, count := b.call(t, http.MethodGet, "/api/v2/team/keyed/workflowrun/count", b.token, "")
		return code == http.StatusOK && count["status"].(map[string]any)["succeeded"] == float64(1)
	}, 10*time.Second, 20*time.Millisecond)
	o.assertNoSecretAtRest(t, id, "signed", everySecret)
}

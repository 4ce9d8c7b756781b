package standalone_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A manual task's form that gives a password field a default keeps it secret in the
// workflow too: every read of the workflow answers it as `********`, a save sending that
// answer back keeps it, and the database files never hold it; a run still offers it, and
// the action approved without the field runs a later script with the real default, whose
// log reads `********`.
func TestIntegrationFormPasswordDefaultStaysSecret(t *testing.T) {
	t.Parallel()
	const def = "f0rm-Default-pw-31"
	o := startObserved(t, map[string]string{"BATON_SERVICE_KEY": gatesServiceKey})
	g := setUpGates(t, o.baton)
	script := `set -e
echo "login $(tasks.form.results.user) with $(tasks.form.results.pw)"
printf '%s' "$(tasks.form.results.pw)" | sha256sum | cut -c1-64 > $(results.hash.path)`
	body := mustJSON(t, map[string]any{
		"name": "defaulted",
		"tasks": []any{
			map[string]any{"name": "start", "type": "start"},
			map[string]any{"name": "form", "type": "manual", "dependencies": []any{map[string]any{"taskRef": "start"}},
				"params": []any{
					map[string]any{"name": "instructions", "value": "Sign in."},
					map[string]any{"name": "params", "value": []any{
						map[string]any{"name": "user", "type": "text", "default": "ann"},
						map[string]any{"name": "pw", "type": "password", "default": def},
					}},
				}},
			map[string]any{"name": "use", "type": "script", "dependencies": []any{map[string]any{"taskRef": "form"}},
				"results": []any{"hash"}, "params": []any{map[string]any{"name": "script", "value": script}}},
			map[string]any{"name": "end", "type": "end", "dependencies": []any{map[string]any{"taskRef": "use"}}},
		},
	})
	g.workflow(t, body)
	code, out := g.call(t, http.MethodPost, "/api/v2/workflowtemplate", g.token, strings.Replace(body, `"defaulted"`, `"defaulted-template"`, 1))
	require.Equal(t, http.StatusCreated, code, out)

	// Every read answers the default masked; the workflow as read, saved back, keeps it.
	reads := []string{
		"/api/v2/team/rel/workflow/defaulted", "/api/v2/team/rel/workflow/defaulted?version=1",
		"/api/v2/team/rel/workflow/defaulted/compose", "/api/v2/team/rel/workflow/defaulted/export",
		"/api/v2/workflow/defaulted/export", "/api/v2/workflowtemplate/defaulted-template",
	}
	for _, path := range reads {
		got := readAll(t, g.baton, path, g.token)
		assert.Contains(t, got, `"default":"********"`, path)
		assertNoSecret(t, path, []byte(got), map[string]string{"default": def})
	}
	// Sent back as read, with the mask: the same workflow, so no new version; with another
	// description, a new version that keeps the default.
	code, out = g.call(t, http.MethodPut, "/api/v2/team/rel/workflow", g.token, readAll(t, g.baton, reads[0], g.token))
	require.Equal(t, http.StatusOK, code, out)
	require.Equal(t, float64(1), out["version"], "the mask read back is the default kept")
	code, out = g.call(t, http.MethodPut, "/api/v2/team/rel/workflow", g.token, withDescription(t, readAll(t, g.baton, reads[0], g.token), "second"))
	require.Equal(t, http.StatusOK, code, out)
	require.Equal(t, float64(2), out["version"])
	code, out = g.call(t, http.MethodPut, "/api/v2/team/rel/workflow/defaulted/compose", g.token, withDescription(t, readAll(t, g.baton, reads[2], g.token), "third"))
	require.Equal(t, http.StatusOK, code, out)
	var answers strings.Builder
	for _, path := range append(reads, "/api/v2/team/rel/workflow/defaulted?version=3", "/api/v2/team/rel/workflow/defaulted/changelog") {
		answers.WriteString(readAll(t, g.baton, path, g.token))
	}

	// A run of the version saved last offers the default: approved without the field, the
	// script gets it, and its log and the task's results read `********`.
	id := g.submit(t, "defaulted", g.token, `{}`)
	act := g.action(t, id)
	code, out = g.decide(t, g.tokens["cy"], fmt.Sprintf(`[{"id":%q,"approved":true,"params":{}}]`, act))
	require.Equal(t, http.StatusNoContent, code, out)
	var done map[string]any
	require.Eventually(t, func() bool {
		_, done = g.call(t, http.MethodGet, "/api/v2/team/rel/workflowrun/"+id, g.token, "")
		return done["phase"] == "completed"
	}, 60*time.Second, 50*time.Millisecond)
	require.Equal(t, "succeeded", done["status"], done)
	assert.Equal(t, float64(3), done["workflowVersion"])
	assert.Equal(t, map[string]any{"user": "ann", "pw": "********"}, byName(t, task(done, "form")["results"]))
	use := task(done, "use")
	assert.Equal(t, map[string]any{"hash": sha256Hex(def)}, byName(t, use["results"]), "the script got the default")
	log := readAll(t, g.baton, "/api/v2/taskrun/"+use["id"].(string)+"/log", g.token)
	assert.Equal(t, "login ann with ********\n", log)
	for _, path := range []string{"/api/v2/team/rel/workflowrun/" + id, "/api/v2/team/rel/action/" + act} {
		answers.WriteString(readAll(t, g.baton, path, g.token))
	}
	everySecret := map[string]string{"default": def}
	assertNoSecret(t, "the API's answers", []byte(answers.String()+log), everySecret)

	require.Eventually(t, func() bool {
		code, count := g.call(t, http.MethodGet, "/api/v2/team/rel/workflowrun/count", g.token, "")
		return code == http.StatusOK && count["status"].(map[string]any)["succeeded"] == float64(1)
	}, 10*time.Second, 20*time.Millisecond)
	o.assertNoSecretAtRest(t, id, "defaulted-template", everySecret)
}

// withDescription answers the JSON object raw with its description set to d.
func withDescription(t *testing.T, raw, d string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(raw), &m))
	m["description"] = d
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return string(out)
}

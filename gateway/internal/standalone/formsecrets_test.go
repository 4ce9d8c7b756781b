package standalone_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A password entered in a manual task's form is a secret wherever it flows: a later
// script gets the real value, yet its log shows `********`, the result it writes from it
// reads `********`, and so do the task runs' params and results, the run's results and the
// action; no answer, no message of the broker and no database file holds it.
func TestIntegrationFormPasswordStaysSecret(t *testing.T) {
	t.Parallel()
	const pw = "f0rm-Secret-value-72"
	o := startObserved(t, map[string]string{"BATON_SERVICE_KEY": gatesServiceKey})
	g := setUpGates(t, o.baton)
	code, out := g.call(t, http.MethodPost, "/api/v2/token", g.token, `{"type":"team","name":"reader","principal":"rel","permissions":["**/read"]}`)
	require.Equal(t, http.StatusCreated, code, out)
	reader := out["token"].(string)
	script := `set -e
echo "login $(tasks.form.results.user) with $(tasks.form.results.pw)"
printf '%s' "$(tasks.form.results.pw)" | sha256sum | cut -c1-64 > $(results.hash.path)
printf 'token=%s' "$(tasks.form.results.pw)" > $(results.carried.path)`
	g.workflow(t, mustJSON(t, map[string]any{
		"name": "signin",
		"tasks": []any{
			map[string]any{"name": "start", "type": "start"},
			map[string]any{"name": "form", "type": "manual", "dependencies": []any{map[string]any{"taskRef": "start"}},
				"params": []any{
					map[string]any{"name": "instructions", "value": "Sign in."},
					map[string]any{"name": "params", "value": []any{
						map[string]any{"name": "user", "type": "text", "required": true},
						map[string]any{"name": "pw", "type": "password", "required": true},
					}},
				}},
			map[string]any{"name": "use", "type": "script", "dependencies": []any{map[string]any{"taskRef": "form"}},
				"results": []any{"hash", "carried"}, "params": []any{map[string]any{"name": "script", "value": script}}},
			map[string]any{"name": "again", "type": "script", "dependencies": []any{map[string]any{"taskRef": "use"}},
				"params": []any{map[string]any{"name": "script", "value": `echo "again $(tasks.use.results.carried)"`}}},
			prop("keep", "formValue", "$(tasks.form.results.pw)", "again"),
			map[string]any{"name": "end", "type": "end", "dependencies": []any{map[string]any{"taskRef": "keep"}}},
		},
	}))
	id := g.submit(t, "signin", g.token, `{}`)
	act := g.action(t, id)
	code, out = g.decide(t, g.tokens["cy"], fmt.Sprintf(`[{"id":%q,"approved":true,"params":{"user":"ann","pw":%q}}]`, act, pw))
	require.Equal(t, http.StatusNoContent, code, out)
	var done map[string]any
	require.Eventually(t, func() bool {
		_, done = g.call(t, http.MethodGet, "/api/v2/team/rel/workflowrun/"+id, reader, "")
		return done["phase"] == "completed"
	}, 60*time.Second, 50*time.Millisecond)
	require.Equal(t, "succeeded", done["status"], done)

	form, use, again := task(done, "form"), task(done, "use"), task(done, "again")
	assert.Equal(t, map[string]any{"user": "ann", "pw": "********"}, byName(t, form["results"]))
	assert.Equal(t, map[string]any{"hash": sha256Hex(pw), "carried": "********"}, byName(t, use["results"]), "the script got the real value")
	assert.Equal(t, "********", byName(t, use["params"])["script"])
	assert.Equal(t, "********", byName(t, again["params"])["script"])
	assert.Equal(t, map[string]any{"formValue": "********"}, byName(t, done["results"]))
	_, a := g.call(t, http.MethodGet, "/api/v2/team/rel/action/"+act, reader, "")
	assert.Contains(t, a["results"], map[string]any{"name": "pw", "value": "********"})

	logs := map[string]string{}
	for _, tr := range []map[string]any{use, again} {
		logs[tr["name"].(string)] = readAll(t, g.baton, "/api/v2/taskrun/"+tr["id"].(string)+"/log", reader)
	}
	assert.Equal(t, "login ann with ********\n", logs["use"], "the log masks the form's password")
	assert.Equal(t, "again ********\n", logs["again"], "and a result made of it")

	var answers strings.Builder
	for _, path := range []string{
		"/api/v2/team/rel/workflowrun/" + id, "/api/v2/team/rel/workflowrun/query",
		"/api/v2/team/rel/action/" + act, "/api/v2/team/rel/action/query",
	} {
		answers.WriteString(readAll(t, g.baton, path, reader))
	}
	everySecret := map[string]string{"form": pw}
	assertNoSecret(t, "the API's answers", []byte(answers.String()+logs["use"]+logs["again"]), everySecret)

	// Runs that ended are put away in the archive; wait for it, so the files hold it.
	require.Eventually(t, func() bool {
		code, count := g.call(t, http.MethodGet, "/api/v2/team/rel/workflowrun/count", g.token, "")
		return code == http.StatusOK && count["status"].(map[string]any)["succeeded"] == float64(1)
	}, 10*time.Second, 20*time.Millisecond)
	o.assertNoSecretAtRest(t, id, "signin", everySecret)
}

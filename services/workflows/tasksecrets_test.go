package workflows_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// loginWorkflow is a workflow whose task gives the password param of catalogue task login
// the value token.
func loginWorkflow(name, token string) string {
	return `{"name":"` + name + `","tasks":[{"name":"start","type":"start"},
	{"name":"call","type":"template","taskRef":"login","params":[{"name":"user","value":"ann"},{"name":"token","value":"` + token + `"}],
	 "dependencies":[{"taskRef":"start"}]},
	{"name":"end","type":"end","dependencies":[{"taskRef":"call"}]}]}`
}

// taskParam returns the value task call gives param name in a workflow's tasks.
func taskParam(t *testing.T, tasks any, name string) any {
	t.Helper()
	for _, task := range tasks.([]any) {
		if task := task.(map[string]any); task["name"] == "call" {
			for _, p := range task["params"].([]any) {
				if p := p.(map[string]any); p["name"] == name {
					return p["value"]
				}
			}
		}
	}
	require.Failf(t, "no task param", "%s in %v", name, tasks)
	return nil
}

// A value a workflow task gives a param its catalogue task declares password is answered
// masked in every read, kept when the mask is sent back, sealed at rest, and in clear in
// the runs service's snapshot.
func TestTaskPasswordParamIsSecret(t *testing.T) {
	t.Parallel()
	bothStores(t, func(t *testing.T, store string) {
		f := newFixture(t, fixtureOptions{store: store})
		f.tasks.mu.Lock()
		f.tasks.tasks["login"] = []domain.TaskDefinition{{Name: "login", Version: 1, Status: "active", Type: "template",
			Params: []domain.Param{{Name: "user", Type: "text"}, {Name: "token", Type: "password", Required: true}}}}
		f.tasks.mu.Unlock()
		const token = "t4sk-t0ken-value"
		created := f.must(t, http.StatusCreated, editor, http.MethodPost, base, loginWorkflow("login", token))
		assert.Equal(t, "********", taskParam(t, created.body["tasks"], "token"))
		assert.Equal(t, "ann", taskParam(t, created.body["tasks"], "user"))
		for _, path := range []string{base + "/login", base + "/login/export", base + "/login/compose"} {
			got := f.must(t, http.StatusOK, reader, http.MethodGet, path, nil)
			assert.NotContains(t, string(got.raw), token, path)
			assert.Contains(t, string(got.raw), "********", path)
		}

		// Each save changes the description too: one that changes nothing makes no version.
		f.must(t, http.StatusOK, editor, http.MethodPut, base, described(loginWorkflow("login", "********"), "second"))
		canvas := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/login/compose", nil)
		f.must(t, http.StatusOK, editor, http.MethodPut, base+"/login/compose",
			[]byte(strings.Replace(string(canvas.raw), `"description":"second"`, `"description":"third"`, 1)))
		svc := auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}
		snap := f.must(t, http.StatusOK, svc, http.MethodGet, "/internal/v1/teams/infra/workflows/login", nil)
		assert.Equal(t, float64(3), snap.body["version"])
		assert.Equal(t, token, taskParam(t, snap.body["tasks"], "token"))

		sealed := 0
		for where, doc := range f.storedDocs(t) {
			assert.NotContains(t, doc, token, where)
			if strings.Contains(doc, `"taskRef":"login"`) {
				assert.Contains(t, doc, `{"name":"token","value":"enc:v1:`, where)
				sealed++
			}
		}
		assert.Equal(t, 3, sealed, "every version")
	})
}

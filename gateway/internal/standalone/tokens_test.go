package standalone_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Through the gateway: a team token with every permission cannot change who holds what in
// its team; a CI job's workflow token submits a run and polls it to the end; the tokens a
// token made stop within the gateway's cache bound once it is revoked.
func TestIntegrationTokensCannotEscalate(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	b := start(t, map[string]string{
		"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error", "BATON_RATE_LIMIT": "0",
		"BATON_AUTH_CACHE_TTL": ttl.String(),
	})
	mint := func(t *testing.T, as, body string) (id, secret string, out map[string]any) {
		t.Helper()
		code, out := b.call(t, http.MethodPost, "/api/v2/token", as, body)
		require.Equal(t, http.StatusCreated, code, out)
		return out["id"].(string), out["token"].(string), out
	}

	// Olive owns team ci; she acts through her user token.
	code, team := b.call(t, http.MethodPost, "/api/v2/team", b.token,
		`{"name":"ci","members":[{"email":"olive@example.com","role":"owner"},{"email":"ed@example.com","role":"editor"}]}`)
	require.Equal(t, http.StatusCreated, code, team)
	ids := map[string]string{}
	for _, m := range team["members"].([]any) {
		m := m.(map[string]any)
		ids[m["email"].(string)] = m["id"].(string)
	}
	code, out := b.call(t, http.MethodPatch, "/api/v2/team/ci", b.token, `{"members":[{"email":"mallory@example.com","role":"reader"}]}`)
	require.Equal(t, http.StatusOK, code, out)
	code, out = b.call(t, http.MethodDelete, "/api/v2/team/ci/members", b.token, `[{"email":"mallory@example.com"}]`)
	require.Equal(t, http.StatusNoContent, code, out)
	_, olive, _ := mint(t, b.token, fmt.Sprintf(`{"type":"user","principal":%q}`, ids["olive@example.com"]))
	teamTokID, teamTok, _ := mint(t, olive, `{"type":"team","principal":"ci","permissions":["**/**"]}`)

	for _, step := range []struct{ name, method, path, body string }{
		{"add an outside owner", http.MethodPatch, "/api/v2/team/ci", `{"members":[{"email":"mallory@example.com","role":"owner"}]}`},
		{"promote a member to owner", http.MethodPatch, "/api/v2/team/ci", `{"members":[{"email":"ed@example.com","role":"owner"}]}`},
		{"add an approver group", http.MethodPatch, "/api/v2/team/ci", `{"approverGroups":[{"name":"leads","approvers":["ed@example.com"]}]}`},
		{"remove the human owner", http.MethodDelete, "/api/v2/team/ci/members", `[{"email":"olive@example.com"}]`},
		{"raise the team's quotas", http.MethodPatch, "/api/v2/team/ci", `{"quotas":{"maxConcurrentRuns":1000}}`},
	} {
		code, out := b.call(t, step.method, step.path, teamTok, step.body)
		assert.Equal(t, http.StatusForbidden, code, "%s: %v", step.name, out)
	}
	code, team = b.call(t, http.MethodGet, "/api/v2/team/ci", b.token, "")
	require.Equal(t, http.StatusOK, code, team)
	roles := map[string]string{}
	for _, m := range team["members"].([]any) {
		m := m.(map[string]any)
		roles[m["email"].(string)] = m["role"].(string)
	}
	assert.Equal(t, map[string]string{"olive@example.com": "owner", "ed@example.com": "editor"}, roles)

	// The team token makes a CI token for workflow build, which makes one more.
	inline := func(name string) string {
		return `{"name":"` + name + `","tasks":[{"name":"start","type":"start"},
			{"name":"say","type":"setwfproperty","params":[{"name":"output","value":"said"},{"name":"value","value":"hi"}],"dependencies":[{"taskRef":"start"}]},
			{"name":"end","type":"end","dependencies":[{"taskRef":"say"}]}]}`
	}
	for _, wf := range []string{"build", "deploy"} {
		require.Eventually(t, func() bool {
			code, _ := b.call(t, http.MethodPost, "/api/v2/team/ci/workflow", olive, inline(wf))
			return code == http.StatusCreated
		}, 30*time.Second, 20*time.Millisecond)
	}
	_, ciTok, _ := mint(t, teamTok, `{"type":"workflow","principal":"ci/build","permissions":["workflowrun/write","workflowrun/read","token/write"]}`)
	_, ciChild, _ := mint(t, ciTok, `{"type":"workflow","principal":"ci/build","permissions":["workflowrun/read"]}`)

	// Submit, then poll: the run, the workflow's runs, the task runs' logs.
	code, run := b.call(t, http.MethodPost, "/api/v2/team/ci/workflow/build/submit?start=true", ciTok, "{}")
	require.Equal(t, http.StatusCreated, code, run)
	runID := run["id"].(string)
	require.Eventually(t, func() bool {
		code, run = b.call(t, http.MethodGet, "/api/v2/team/ci/workflowrun/"+runID, ciTok, "")
		require.Equal(t, http.StatusOK, code, run)
		return run["phase"] == "completed"
	}, 30*time.Second, 20*time.Millisecond)
	assert.Equal(t, "succeeded", run["status"], run)
	for _, task := range run["tasks"].([]any) {
		req, err := http.NewRequest(http.MethodGet, b.url+"/api/v2/taskrun/"+task.(map[string]any)["id"].(string)+"/log", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+ciChild)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, "the log of task run %v", task.(map[string]any)["name"])
	}
	code, page := b.call(t, http.MethodGet, "/api/v2/team/ci/workflowrun/query?workflows=build", ciChild, "")
	require.Equal(t, http.StatusOK, code, page)
	assert.EqualValues(t, 1, page["totalElements"])
	code, count := b.call(t, http.MethodGet, "/api/v2/team/ci/workflowrun/count", ciChild, "")
	require.Equal(t, http.StatusOK, code, count)
	assert.EqualValues(t, 1, count["status"].(map[string]any)["all"])

	// Another workflow's run is not the CI token's to see.
	code, other := b.call(t, http.MethodPost, "/api/v2/team/ci/workflow/deploy/submit", olive, "{}")
	require.Equal(t, http.StatusCreated, code, other)
	code, _ = b.call(t, http.MethodGet, "/api/v2/team/ci/workflowrun/"+other["id"].(string), ciTok, "")
	assert.Equal(t, http.StatusNotFound, code)
	code, page = b.call(t, http.MethodGet, "/api/v2/team/ci/workflowrun/query", ciTok, "")
	require.Equal(t, http.StatusOK, code, page)
	assert.EqualValues(t, 1, page["totalElements"], "only its workflow's runs")

	// A child asking to outlive its parent gets the parent's expiry.
	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	_, shortLived, _ := mint(t, olive, fmt.Sprintf(`{"type":"team","principal":"ci","permissions":["token/write","workflow/read"],"expirationDate":%q}`, exp.Format(time.RFC3339Nano)))
	_, _, child := mint(t, shortLived, fmt.Sprintf(`{"type":"team","principal":"ci","permissions":["workflow/read"],"expirationDate":%q}`,
		time.Now().Add(48*time.Hour).UTC().Format(time.RFC3339Nano)))
	got, err := time.Parse(time.RFC3339Nano, child["expirationDate"].(string))
	require.NoError(t, err)
	assert.True(t, got.Equal(exp), "child expires %s, parent %s", got, exp)

	// Revoking the team token stops the tokens it made, however far down, within the
	// gateway's cache bound (the slack is for a loaded machine, not for the design).
	code, out = b.call(t, http.MethodDelete, "/api/v2/token/"+teamTokID, olive, "")
	require.Equal(t, http.StatusOK, code, out)
	revokedAt := time.Now()
	for name, secret := range map[string]string{"team token": teamTok, "its CI token": ciTok, "the CI token's token": ciChild} {
		require.Eventually(t, func() bool {
			code, _ := b.call(t, http.MethodGet, "/api/v2/team/ci/workflowrun/"+runID, secret, "")
			return code == http.StatusUnauthorized
		}, ttl+5*time.Second, 20*time.Millisecond, name)
		t.Logf("%s refused %v after the revocation (cache TTL %v)", name, time.Since(revokedAt).Round(time.Millisecond), ttl)
	}
}

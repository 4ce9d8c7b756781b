package standalone_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitingHook makes team keys and its workflow hook on b: a script task hands the run's
// callback token to the outside world (a file in dir named by the run id), then an
// eventwait task waits on topic done.
func waitingHook(t *testing.T, b *baton, dir string) {
	t.Helper()
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"keys"}`)
	require.Equal(t, http.StatusCreated, code, out)
	script := `printf %s '$(context.params.callback-token)' > '` + dir + `/$(context.params.workflowrun-ref)'`
	body := `{"name":"hook","tasks":[{"name":"start","type":"start"},
		{"name":"hand","type":"script","params":[{"name":"script","value":` + quote(script) + `}],"dependencies":[{"taskRef":"start"}]},
		{"name":"wait","type":"eventwait","params":[{"name":"topic","value":"done"}],"dependencies":[{"taskRef":"hand"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"wait"}]}]}`
	require.Eventually(t, func() bool {
		code, out := b.call(t, http.MethodPost, "/api/v2/team/keys/workflow", b.token, body)
		require.NotEqual(t, http.StatusBadRequest, code, "%v", out)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// hookRun submits a run of hook on b and answers its id and the callback token it handed
// out, once its eventwait task waits.
func hookRun(t *testing.T, b *baton, dir string) (id, token string) {
	t.Helper()
	code, run := b.call(t, http.MethodPost, "/api/v2/team/keys/workflow/hook/submit?start=true", b.token, `{}`)
	require.Equal(t, http.StatusCreated, code, run)
	id = run["id"].(string)
	require.Eventually(t, func() bool {
		_, r := b.call(t, http.MethodGet, "/api/v2/team/keys/workflowrun/"+id, b.token, "")
		return r["tasks"] != nil && task(r, "wait")["status"] == "waiting"
	}, 30*time.Second, 10*time.Millisecond, "run %s waits", id)
	raw, err := os.ReadFile(filepath.Join(dir, id))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(raw), "btr_"), "the script got the callback token")
	return id, string(raw)
}

// callback answers run id's topic done with token and returns the status code.
func callback(t *testing.T, b *baton, id, token string) int {
	t.Helper()
	code, _ := b.call(t, http.MethodPost, "/api/v2/callback?ref="+id+"&topic=done", token, `{}`)
	return code
}

// succeeds waits until run id has succeeded.
func succeeds(t *testing.T, b *baton, id string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, r := b.call(t, http.MethodGet, "/api/v2/team/keys/workflowrun/"+id, b.token, "")
		return r["status"] == "succeeded"
	}, 30*time.Second, 10*time.Millisecond, "run %s succeeds", id)
}

// A run waiting on eventwait is answered with its own callback token after the instance
// is stopped and started again on the same data directory: the service key that signed
// the token is kept there.
func TestIntegrationCallbackTokenSurvivesARestart(t *testing.T) {
	t.Parallel()
	data, out := t.TempDir(), t.TempDir()
	vars := map[string]string{"BATON_DATA_DIR": data, "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"}
	b := start(t, vars)
	waitingHook(t, b, out)
	id, token := hookRun(t, b, out)
	require.NoError(t, b.stop())

	again := start(t, vars)
	require.Equal(t, http.StatusNoContent, callback(t, again, id, token), "the token handed out before the restart")
	succeeds(t, again, id)
	info, err := os.Stat(filepath.Join(data, "service-key"))
	require.NoError(t, err, "the service key is kept in the data directory")
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}

// After BATON_SERVICE_KEY changes, a callback token signed with the key it replaced is
// refused unless that key is listed in BATON_SERVICE_KEY_PREVIOUS, and accepted when it is.
func TestIntegrationPreviousServiceKeysVerifyCallbackTokens(t *testing.T) {
	t.Parallel()
	const (
		oldKey   = "old-service-key-for-rotation-0123"
		newKey   = "new-service-key-for-rotation-4567"
		otherKey = "another-retired-service-key-89ab"
	)
	data, out := t.TempDir(), t.TempDir()
	vars := func(key, previous string) map[string]string {
		return map[string]string{"BATON_DATA_DIR": data, "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error",
			"BATON_SERVICE_KEY": key, "BATON_SERVICE_KEY_PREVIOUS": previous}
	}
	b := start(t, vars(oldKey, ""))
	waitingHook(t, b, out)
	id, token := hookRun(t, b, out)
	require.NoError(t, b.stop())

	rotated := start(t, vars(newKey, otherKey))
	assert.Equal(t, http.StatusUnauthorized, callback(t, rotated, id, token), "the old key is not listed")
	require.NoError(t, rotated.stop())

	listed := start(t, vars(newKey, otherKey+","+oldKey))
	require.Equal(t, http.StatusNoContent, callback(t, listed, id, token), "the old key is listed")
	succeeds(t, listed, id)
}

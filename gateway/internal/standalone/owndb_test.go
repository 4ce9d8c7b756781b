package standalone_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Standalone mode keeps identity's records in identity.db and the task catalogue in
// tasks.db, none in the embedded MongoDB, and they outlive a restart: the team, the token
// minted (which authenticates by the hash kept in the file) and its revocation, a team
// task and its versions.
func TestIntegrationIdentityAndTasksKeepTheirOwnFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	vars := map[string]string{"BATON_DATA_DIR": dir, "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error", "BATON_RATE_LIMIT": "0"}
	b := start(t, vars)
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"kept","labels":{"tier":"1"}}`)
	require.Equal(t, http.StatusCreated, code, out)
	code, out = b.call(t, http.MethodPost, "/api/v2/token", b.token, `{"type":"team","principal":"kept","permissions":["**/read"]}`)
	require.Equal(t, http.StatusCreated, code, out)
	secret := out["token"].(string)
	code, revoked := b.call(t, http.MethodPost, "/api/v2/token", b.token, `{"type":"team","principal":"kept","permissions":["**/read"]}`)
	require.Equal(t, http.StatusCreated, code, revoked)
	code, out = b.call(t, http.MethodDelete, "/api/v2/token/"+revoked["id"].(string), b.token, "")
	require.Equal(t, http.StatusOK, code, out)
	require.Equal(t, false, out["valid"], "the token answered is revoked")
	code, out = b.call(t, http.MethodPost, "/api/v2/team/kept/task", b.token, `{"name":"build","spec":{"image":"alpine:3","script":"v1"}}`)
	require.Equal(t, http.StatusCreated, code, out)
	code, out = b.call(t, http.MethodPut, "/api/v2/team/kept/task/build", b.token, `{"name":"build","changelog":{"reason":"two"},"spec":{"image":"alpine:3","script":"v2"}}`)
	require.Equal(t, http.StatusOK, code, out)
	require.NoError(t, b.stop())

	for _, svc := range []string{"identity", "tasks"} {
		_, err := os.Stat(filepath.Join(dir, svc+".db"))
		require.NoError(t, err, "%s keeps a file of its own", svc)
		_, err = os.Stat(filepath.Join(dir, "mongo", "baton_"+svc+".sqlite"))
		assert.ErrorIs(t, err, os.ErrNotExist, "%s writes nothing to the embedded MongoDB", svc)
	}

	again := start(t, vars)
	code, out = again.call(t, http.MethodGet, "/api/v2/team/kept", secret, "")
	require.Equal(t, http.StatusOK, code, out)
	assert.Equal(t, map[string]any{"tier": "1"}, out["labels"])
	code, _ = again.call(t, http.MethodGet, "/api/v2/team/kept", revoked["token"].(string), "")
	assert.Equal(t, http.StatusUnauthorized, code, "a revoked token stays revoked")
	code, out = again.call(t, http.MethodGet, "/api/v2/team/kept/task/build?version=1", again.token, "")
	require.Equal(t, http.StatusOK, code, out)
	assert.Equal(t, "v1", out["spec"].(map[string]any)["script"])
	code, out = again.call(t, http.MethodGet, "/api/v2/team/kept/task/build", again.token, "")
	require.Equal(t, http.StatusOK, code, out)
	assert.EqualValues(t, 2, out["version"])
	require.NoError(t, again.stop())
}

package standalone_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/baton-flow/baton/libs/embedded"
	"github.com/baton-flow/baton/libs/mongox"
)

// A data directory whose embedded database holds the runs of an earlier version keeps its
// runs there, on the same store as a shared MongoDB, and runs go through it. The slots
// that version left in the documents, the count of a team's runs far above its limit,
// are written again from the runs in flight at start: a run of that team is not queued
// behind runs that do not exist.
func TestIntegrationRunsKeptInTheEmbeddedDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	m, err := embedded.StartMongo(ctx, embedded.MongoConfig{Dir: filepath.Join(dir, "mongo")})
	require.NoError(t, err)
	client, err := mongox.Connect(ctx, m.URI())
	require.NoError(t, err)
	_, err = client.Database("baton_runs").Collection("counters").InsertOne(ctx, bson.M{"_id": "slots/eng", "n": 1_000_000})
	require.NoError(t, err)
	require.NoError(t, client.Disconnect(ctx))
	m.Close()
	require.FileExists(t, filepath.Join(dir, "mongo", "baton_runs.sqlite"))

	b := start(t, map[string]string{"BATON_DATA_DIR": dir, "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"eng"}`)
	require.Equal(t, http.StatusCreated, code, out)
	workflow := `{"name":"pipeline","tasks":[{"name":"start","type":"start"},
		{"name":"build","type":"script","params":[{"name":"script","value":"echo built"}],"dependencies":[{"taskRef":"start"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"build"}]}]}`
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/eng/workflow", b.token, workflow)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)

	code, run := b.call(t, http.MethodPost, "/api/v2/team/eng/workflow/pipeline/submit?start=true", b.token, `{}`)
	require.Equal(t, http.StatusCreated, code, run)
	id := run["id"].(string)
	var done map[string]any
	require.Eventually(t, func() bool {
		_, done = b.call(t, http.MethodGet, "/api/v2/team/eng/workflowrun/"+id, b.token, "")
		return done["phase"] == "completed"
	}, 60*time.Second, 50*time.Millisecond, "the run ends, not queued behind the slots left counted")
	assert.Equal(t, "succeeded", done["status"], done)
	_, err = os.Stat(filepath.Join(dir, "runs.db"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the runs stay in the embedded database")
}

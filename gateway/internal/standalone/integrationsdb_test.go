package standalone_test

import (
	"database/sql"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // reads integrations.db as the service's store writes it
)

// Standalone mode keeps the integrations service's records in integrations.db, none in
// the embedded MongoDB, and they outlive a restart: the record of an inbound CloudEvent
// names its run in the file, and the same event sent after the restart answers that run.
func TestIntegrationIntegrationsKeepsItsOwnFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	vars := map[string]string{"BATON_DATA_DIR": dir, "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error", "BATON_RATE_LIMIT": "0"}
	const cloudEvent = `{"specversion":"1.0","id":"kept-1","source":"https://ci.example.com/pipelines","type":"com.example.push",
		"subject":"ops/ingest","datacontenttype":"application/json","data":{"branch":"main"}}`
	b := start(t, vars)
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"ops"}`)
	require.Equal(t, http.StatusCreated, code, out)
	r := &eventsRig{baton: b}
	r.save(t, ingestWorkflow("ingest", true, pushOnly))
	code, body, _ := r.post(t, "/api/v2/event?ref=ops/ingest", "application/cloudevents+json", b.token, cloudEvent)
	require.Equal(t, http.StatusCreated, code, string(body))
	first := decodeRun(t, body)["id"].(string)
	require.NoError(t, b.stop())

	_, err := os.Stat(filepath.Join(dir, "mongo", "baton_integrations.sqlite"))
	assert.ErrorIs(t, err, os.ErrNotExist, "integrations writes nothing to the embedded MongoDB")
	u := url.URL{Scheme: "file", Path: filepath.Join(dir, "integrations.db"), OmitHost: true, RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite", u.String())
	require.NoError(t, err)
	var kept string
	require.NoError(t, db.QueryRow(`SELECT run_id FROM event_receipts`).Scan(&kept), "the event's record is in integrations.db")
	require.NoError(t, db.Close())
	assert.Equal(t, first, kept)

	again := start(t, vars)
	r = &eventsRig{baton: again}
	code, body, _ = r.post(t, "/api/v2/event?ref=ops/ingest", "application/cloudevents+json", again.token, cloudEvent)
	require.Equal(t, http.StatusOK, code, string(body))
	assert.Equal(t, first, decodeRun(t, body)["id"], "the same event answers the first run")
	assert.Equal(t, 1, r.runCount(t))
	require.NoError(t, again.stop())
}

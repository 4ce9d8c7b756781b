package standalone_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/contract"
)

const codehostSecret = "a webhook secret only the code host knows"

// codehostExample reads one of the code host's published webhook examples (kept with the
// integrations service's tests) and sets its installation's id (and, for installation
// events, when it was made) to the test's.
func codehostExample(t *testing.T, name string, installation int64, made time.Time) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "services", "integrations", "internal", "app", "testdata", "codehost", name+".json"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	in := doc["installation"].(map[string]any)
	in["id"] = installation
	if !made.IsZero() {
		in["created_at"] = made.Unix()
	}
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// deliver posts body to /api/v2/webhook as the code host does, signed with secret (not
// signed when secret is empty), and answers the status and the body.
func (b *baton) deliver(t *testing.T, event, delivery, secret string, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.url+"/api/v2/webhook", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/044aadd")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	req.Header.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
	if secret != "" {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(body)
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
	}
	resp, err := contract.Client(t, nil).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	}
	return resp.StatusCode, out
}

// The code host through the gateway: an admin sets the webhook secret; the code host
// delivers a signed installation event; the team's owner's install link carries a signed
// state, and the install flow's landing links the installation to the team; a signed push
// then runs the team's workflow whose codehost trigger is on (params data and event),
// once however often it is delivered; unsigned and badly signed pushes are refused and
// run nothing.
func TestIntegrationCodeHost(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error",
		"BATON_CODEHOST_APP_URL": "https://codehost.example/apps/baton"})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"ops"}`)
	require.Equal(t, http.StatusCreated, code, out)
	for name, trigger := range map[string]string{
		"on-push":  `"codehost":{"enabled":true,"conditions":[{"field":"$.repository.full_name","operation":"equals","value":"Codertocat/Hello-World"}]}`,
		"on-main":  `"codehost":{"enabled":true,"conditions":[{"field":"$.ref","operation":"equals","value":"refs/heads/main"}]}`,
		"by-hand":  `"manual":{"enabled":true}`,
		"disabled": `"codehost":{"enabled":false}`,
	} {
		body := fmt.Sprintf(`{"name":%q,"triggers":{%s},"tasks":[{"name":"start","type":"start"},{"name":"end","type":"end","dependencies":[{"taskRef":"start"}]}]}`, name, trigger)
		require.Eventually(t, func() bool {
			code, out := b.call(t, http.MethodPut, "/api/v2/team/ops/workflow", b.token, body)
			require.NotEqual(t, http.StatusBadRequest, code, "%v", out)
			return code == http.StatusOK || code == http.StatusCreated
		}, 30*time.Second, 20*time.Millisecond)
	}

	// No webhook secret yet: nothing can be verified, so nothing is accepted.
	const installation = 957387
	code, out = b.deliver(t, "installation", "d-0", codehostSecret, codehostExample(t, "installation-created", installation, time.Now()))
	assert.Equal(t, http.StatusNotFound, code, "%v", out)
	assert.Equal(t, "INTEGRATION_NOT_LINKED", out["reason"])

	var settings []any
	code = b.callJSON(t, http.MethodPut, "/api/v2/settings", b.token, `[{"key":"codehost","config":[{"key":"webhookSecret","value":"`+codehostSecret+`"}]}]`, &settings)
	require.Equal(t, http.StatusOK, code)
	assert.NotContains(t, fmt.Sprint(settings), codehostSecret, "the secret is not answered")

	// The integrations: the code host unlinked, with the install link for an admin.
	var list []map[string]any
	code = b.callJSON(t, http.MethodGet, "/api/v2/integration?team=ops", b.token, "", &list)
	require.Equal(t, http.StatusOK, code)
	require.Len(t, list, 2)
	host := list[0]
	assert.Equal(t, "codehost", host["id"])
	assert.Equal(t, "unlinked", host["status"])
	link, err := url.Parse(host["link"].(string))
	require.NoError(t, err)
	assert.Equal(t, "/apps/baton/installations/new", link.Path)
	state := link.Query().Get("state")
	require.NotEmpty(t, state)

	// The code host tells of the installation (the settings are read anew within 2 s).
	created := codehostExample(t, "installation-created", installation, time.Now())
	require.Eventually(t, func() bool {
		code, out = b.deliver(t, "installation", "d-1", codehostSecret, created)
		return code == http.StatusOK
	}, 10*time.Second, 100*time.Millisecond, "%v", out)

	// The browser lands with the installation and the state; a forged state links nothing.
	code, out = b.call(t, http.MethodGet, "/api/v2/integration/codehost/installation?installation_id=957387&setup_action=install&state="+url.QueryEscape(state+"x"), "", "")
	assert.Equal(t, http.StatusUnauthorized, code, "%v", out)
	assert.Equal(t, "INTEGRATION_INVALID_SIGNATURE", out["reason"])
	code, out = b.call(t, http.MethodGet, "/api/v2/integration/codehost/installation?installation_id=957387&setup_action=install&state="+url.QueryEscape(state), "", "")
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, map[string]any{"installationId": float64(installation), "team": "ops", "status": "linked"}, out)
	code = b.callJSON(t, http.MethodGet, "/api/v2/integration?team=ops", b.token, "", &list)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "linked", list[0]["status"])
	assert.Equal(t, "957387", list[0]["ref"])

	// Unsigned and badly signed pushes: 401, and no run.
	push := codehostExample(t, "push", installation, time.Time{})
	code, out = b.deliver(t, "push", "d-2", "", push)
	assert.Equal(t, http.StatusUnauthorized, code, "%v", out)
	assert.Equal(t, "INTEGRATION_INVALID_SIGNATURE", out["reason"])
	code, out = b.deliver(t, "push", "d-3", "not the secret", push)
	assert.Equal(t, http.StatusUnauthorized, code, "%v", out)
	assert.Equal(t, "INTEGRATION_INVALID_SIGNATURE", out["reason"])
	assert.Empty(t, codehostRuns(t, b), "nothing ran")

	// A signed push runs on-push (on-main's condition does not hold).
	code, out = b.deliver(t, "push", "d-4", codehostSecret, push)
	require.Equal(t, http.StatusOK, code, "%v", out)
	runs := out["runs"].([]any)
	require.Len(t, runs, 1, "%v", out)
	run := runs[0].(map[string]any)
	assert.Equal(t, "on-push", run["workflowRef"])
	assert.Equal(t, "codehost", run["trigger"])
	assert.Equal(t, map[string]any{"type": "codehost", "id": "957387", "name": "Codertocat"}, run["initiatedBy"])
	params := map[string]any{}
	for _, p := range run["params"].([]any) {
		p := p.(map[string]any)
		params[p["name"].(string)] = p["value"]
	}
	assert.Equal(t, "push", params["event"])
	data := params["data"].(map[string]any)
	assert.Equal(t, "refs/tags/simple-tag", data["ref"])
	assert.Equal(t, "Codertocat/Hello-World", data["repository"].(map[string]any)["full_name"])

	// Delivered again (the code host's redelivery): the same run, nothing new.
	code, out = b.deliver(t, "push", "d-4", codehostSecret, push)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, true, out["replayed"])
	assert.Equal(t, run["id"], out["runs"].([]any)[0].(map[string]any)["id"])
	got := codehostRuns(t, b)
	require.Len(t, got, 1)
	assert.Equal(t, run["id"], got[0]["id"])

	// Unlinked by the admin: pushes run nothing.
	code, _ = b.call(t, http.MethodPost, "/api/v2/integration/codehost/unlink", b.token, `{"installationId":957387,"team":"ops"}`)
	require.Equal(t, http.StatusNoContent, code)
	code, out = b.deliver(t, "push", "d-5", codehostSecret, push)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Empty(t, out["runs"])
	assert.Len(t, codehostRuns(t, b), 1)

	// Linked again by the admin, then the team is deleted: its links go with it, and a team
	// made later under its name starts unlinked.
	code, out = b.call(t, http.MethodPost, "/api/v2/integration/codehost/link", b.token, `{"installationId":"957387","team":"ops"}`)
	require.Equal(t, http.StatusOK, code, "%v", out)
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodDelete, "/api/v2/team/ops", b.token, "")
		return code == http.StatusNoContent
	}, 30*time.Second, 50*time.Millisecond, "the team's run has ended")
	code, out = b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"ops"}`)
	require.Equal(t, http.StatusCreated, code, "%v", out)
	require.Eventually(t, func() bool {
		code := b.callJSON(t, http.MethodGet, "/api/v2/integration?team=ops", b.token, "", &list)
		return code == http.StatusOK && list[0]["status"] == "unlinked"
	}, 30*time.Second, 50*time.Millisecond, "%v", list)
}

// codehostRuns answers the runs of team ops the code host started.
func codehostRuns(t *testing.T, b *baton) []map[string]any {
	t.Helper()
	var page struct {
		Content []map[string]any `json:"content"`
	}
	code := b.callJSON(t, http.MethodGet, "/api/v2/team/ops/workflowrun/query?limit=1000", b.token, "", &page)
	require.Equal(t, http.StatusOK, code)
	var out []map[string]any
	for _, r := range page.Content {
		if strings.EqualFold(fmt.Sprint(r["trigger"]), "codehost") {
			out = append(out, r)
		}
	}
	return out
}

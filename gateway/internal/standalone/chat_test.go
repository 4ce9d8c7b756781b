package standalone_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/contract"
)

// chatPlatform is a chat platform's Web API, recording what Baton calls.
type chatPlatform struct {
	srv    *httptest.Server
	mu     sync.Mutex
	calls  []map[string]any // each call's body, with "method" added
	emails map[string]string
	ts     atomic.Int64
}

const chatBot = "xoxb-e2e-bot"

func newChatPlatform(t *testing.T) *chatPlatform {
	t.Helper()
	p := &chatPlatform{emails: map[string]string{"U-ANN": "ann@example.com", "U-BOB": "bob@example.com", "U-CY": "cy@example.com"}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := strings.TrimPrefix(r.URL.Path, "/")
		raw, _ := io.ReadAll(r.Body)
		body := map[string]any{}
		if form, err := url.ParseQuery(string(raw)); err == nil && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			for k := range form {
				body[k] = form.Get(k)
			}
		} else {
			_ = json.Unmarshal(raw, &body)
		}
		body["method"] = method
		p.mu.Lock()
		p.calls = append(p.calls, body)
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+chatBot {
			_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_auth"}`))
			return
		}
		switch method {
		case "users.info":
			email, _ := p.emails[body["user"].(string)]
			_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "user": map[string]any{"id": body["user"], "profile": map[string]any{"email": email}}})
		case "chat.postMessage":
			_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "channel": body["channel"], "ts": "1700000000." + strconv.FormatInt(p.ts.Add(1), 10)})
		default:
			_, _ = w.Write([]byte(`{"ok":true}`))
		}
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// find answers the first call of method that ok accepts, once there is one.
func (p *chatPlatform) find(t *testing.T, method string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	var found map[string]any
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.calls {
			if c["method"] == method && ok(c) {
				found = c
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond, "no %s call", method)
	return found
}

func (p *chatPlatform) count(method string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.calls {
		if c["method"] == method {
			n++
		}
	}
	return n
}

func text(c map[string]any) string { s, _ := c["text"].(string); return s }

const chatSecret = "e2e-signing-secret"

// chatSend posts body to path as the chat platform does: signed with the signing secret.
func (g *gates) chatSend(t *testing.T, path, contentType, body string) (int, map[string]any) {
	t.Helper()
	return g.chatSendAt(t, strconv.FormatInt(time.Now().Unix(), 10), path, contentType, body)
}

// chatSendAt is chatSend with the timestamp ts.
func (g *gates) chatSendAt(t *testing.T, ts, path, contentType, body string) (int, map[string]any) {
	t.Helper()
	m := hmac.New(sha256.New, []byte(chatSecret))
	m.Write([]byte("v0:" + ts + ":" + body))
	req, err := http.NewRequest(http.MethodPost, g.url+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("x-chat-request-timestamp", ts)
	req.Header.Set("x-chat-signature", "v0="+hex.EncodeToString(m.Sum(nil)))
	resp, err := contract.Client(t, nil).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	}
	return resp.StatusCode, out
}

var chatTrigger atomic.Int64

// slash sends `/baton <text>` as chat user.
func (g *gates) slash(t *testing.T, user, text string) (int, map[string]any) {
	t.Helper()
	form := url.Values{"team_id": {"T1"}, "channel_id": {"C-OPS"}, "user_id": {user}, "command": {"/baton"}, "text": {text},
		"trigger_id": {"trig-" + strconv.FormatInt(chatTrigger.Add(1), 10)}, "response_url": {"https://hooks.example.com/x"}}
	return g.chatSend(t, "/api/v2/integration/chat/commands", "application/x-www-form-urlencoded", form.Encode())
}

// clickAs clicks a message's button as chat user.
func (g *gates) clickAs(t *testing.T, user, actionID, value string) (int, map[string]any) {
	t.Helper()
	return g.chatSend(t, "/api/v2/integration/chat/interactivity", "application/x-www-form-urlencoded", clickForm(t, user, actionID, value))
}

// clickForm is the interactivity form of a click on a message's button by chat user.
func clickForm(t *testing.T, user, actionID, value string) string {
	t.Helper()
	payload, err := json.Marshal(map[string]any{"type": "block_actions", "team": map[string]any{"id": "T1"}, "user": map[string]any{"id": user},
		"channel": map[string]any{"id": "C-OPS"}, "message": map[string]any{"ts": "1700000000.9"}, "trigger_id": "trig-click",
		"actions": []any{map[string]any{"type": "button", "action_id": actionID, "value": value}}})
	require.NoError(t, err)
	return url.Values{"payload": {string(payload)}}.Encode()
}

// buttonValue answers the value of a message's button.
func buttonValue(c map[string]any) string {
	blocks, _ := c["blocks"].([]any)
	for _, b := range blocks {
		els, _ := b.(map[string]any)["elements"].([]any)
		for _, e := range els {
			if v, ok := e.(map[string]any)["value"].(string); ok {
				return v
			}
		}
	}
	return ""
}

func TestIntegrationChat(t *testing.T) {
	t.Parallel()
	chat := newChatPlatform(t)
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0",
		"BATON_LOG_LEVEL": "error", "BATON_SERVICE_KEY": gatesServiceKey, "BATON_CHAT_API_URL": chat.srv.URL})
	g := setUpGates(t, b)

	// Unsigned and wrongly signed requests are refused before anything else.
	code, out := g.call(t, http.MethodPost, "/api/v2/integration/chat/events", "", `{"type":"url_verification","challenge":"c"}`)
	assert.Equal(t, http.StatusUnauthorized, code, "%v", out)

	var settings []any
	code = g.callJSON(t, http.MethodPut, "/api/v2/settings", g.token,
		`[{"key":"chat","config":[{"key":"signingSecret","value":"`+chatSecret+`"},{"key":"botToken","value":"`+chatBot+`"}]}]`, &settings)
	require.Equal(t, http.StatusOK, code, "%v", settings)
	// Settings reach the integrations service within a few seconds.
	require.Eventually(t, func() bool {
		code, out = g.chatSend(t, "/api/v2/integration/chat/events", "application/json", `{"type":"url_verification","challenge":"c-`+strconv.FormatInt(chatTrigger.Add(1), 10)+`"}`)
		return code == http.StatusOK
	}, 30*time.Second, 100*time.Millisecond)
	assert.NotEmpty(t, out["challenge"])

	g.workflow(t, `{"name":"build","tasks":[{"name":"start","type":"start"},{"name":"end","type":"end","dependencies":[{"taskRef":"start"}]}]}`)
	g.workflow(t, `{"name":"ship","tasks":[{"name":"start","type":"start"},
		{"name":"approve","type":"approval","params":[{"name":"approverGroupRef","value":"leads"},{"name":"instructions","value":"Check staging first."}],"dependencies":[{"taskRef":"start"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"approve","executionCondition":"success"}]}]}`)

	// `/baton run rel/build` as cy: a run with trigger chat, its end posted to the channel.
	code, out = g.slash(t, "U-CY", "run rel/build")
	require.Equal(t, http.StatusOK, code, "%v", out)
	require.Equal(t, "in_channel", out["response_type"], "%v", out)
	runID := strings.Trim(strings.Fields(strings.SplitN(out["text"].(string), "run `", 2)[1])[0], "`")
	run := g.run(t, runID, ended)
	assert.Equal(t, "chat", run["trigger"])
	assert.Equal(t, "succeeded", run["status"])
	posted := chat.find(t, "chat.postMessage", func(c map[string]any) bool { return strings.Contains(text(c), runID) })
	assert.Equal(t, "C-OPS", posted["channel"])
	assert.Contains(t, text(posted), "succeeded")

	// A run of an approval workflow from chat: the approval is posted with buttons.
	code, out = g.slash(t, "U-CY", "run rel/ship")
	require.Equal(t, http.StatusOK, code, "%v", out)
	require.Equal(t, "in_channel", out["response_type"], "%v", out)
	shipID := strings.Trim(strings.Fields(strings.SplitN(out["text"].(string), "run `", 2)[1])[0], "`")
	msg := chat.find(t, "chat.postMessage", func(c map[string]any) bool {
		return strings.Contains(text(c), shipID) && buttonValue(c) != ""
	})
	assert.Contains(t, text(msg), "Check staging first.")
	value := buttonValue(msg)
	actionID := g.action(t, shipID)
	assert.Equal(t, "rel/"+actionID, value)

	// cy is not in the approver group: refused, told alone, the action stays open.
	code, out = g.clickAs(t, "U-CY", "baton_approve", value)
	require.Equal(t, http.StatusOK, code, "%v", out)
	chat.find(t, "chat.postEphemeral", func(c map[string]any) bool { return c["user"] == "U-CY" })
	code, act := g.call(t, http.MethodGet, "/api/v2/team/rel/action/"+actionID, g.token, "")
	require.Equal(t, http.StatusOK, code, "%v", act)
	assert.Equal(t, "submitted", act["status"])
	assert.Empty(t, act["actioners"])

	// ann is: the click approves as ann, and the run succeeds.
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	annClick := clickForm(t, "U-ANN", "baton_approve", value)
	code, out = g.chatSendAt(t, ts, "/api/v2/integration/chat/interactivity", "application/x-www-form-urlencoded", annClick)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "succeeded", g.run(t, shipID, ended)["status"])
	code, act = g.call(t, http.MethodGet, "/api/v2/team/rel/action/"+actionID, g.token, "")
	require.Equal(t, http.StatusOK, code, "%v", act)
	assert.Equal(t, "approved", act["status"])
	actioners := act["actioners"].([]any)
	require.Len(t, actioners, 1, "%v", actioners)
	assert.Equal(t, g.ids["ann"], actioners[0].(map[string]any)["approverId"])
	chat.find(t, "chat.update", func(c map[string]any) bool { return strings.Contains(text(c), "approved by") })
	// Once decided, the message shows the outcome, without buttons.
	chat.find(t, "chat.update", func(c map[string]any) bool {
		return strings.Contains(text(c), "*approved*") && buttonValue(c) == ""
	})
	chat.find(t, "chat.postMessage", func(c map[string]any) bool {
		return strings.Contains(text(c), shipID) && strings.Contains(text(c), "succeeded")
	})

	// The same signed click again is a replay: refused, nothing decided or posted.
	updates, ephemerals := chat.count("chat.update"), chat.count("chat.postEphemeral")
	code, out = g.chatSendAt(t, ts, "/api/v2/integration/chat/interactivity", "application/x-www-form-urlencoded", annClick)
	assert.Equal(t, http.StatusUnauthorized, code, "%v", out)
	assert.Equal(t, "INTEGRATION_INVALID_SIGNATURE", out["reason"])
	assert.Equal(t, updates, chat.count("chat.update"))
	assert.Equal(t, ephemerals, chat.count("chat.postEphemeral"))

	// Oversized: 413 at the gateway.
	code, out = g.chatSend(t, "/api/v2/integration/chat/events", "application/json", `{"type":"event_callback","pad":"`+strings.Repeat("x", 1<<20)+`"}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, code, "%v", out)
}

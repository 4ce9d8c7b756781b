package integrations

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeChat is a chat platform's Web API: the methods Baton calls, answering as the
// platform does, and recording every call.
type fakeChat struct {
	srv *httptest.Server

	mu     sync.Mutex
	calls  []chatCall
	emails map[string]string // chat user → email
	token  string            // the bot token the workspace's install gets
	down   bool              // answer 503 to everything
	ts     int
}

// chatCall is one call: its method, bearer token and body (a form's fields, or JSON).
type chatCall struct {
	Method string
	Token  string
	Body   map[string]any
}

const fakeBotToken = "xoxb-fake-bot-token-1234"

func newFakeChat(t testing.TB) *fakeChat {
	t.Helper()
	f := &fakeChat{emails: map[string]string{}, token: fakeBotToken}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeChat) serve(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/")
	raw, _ := io.ReadAll(r.Body)
	body := map[string]any{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		form, _ := url.ParseQuery(string(raw))
		for k := range form {
			body[k] = form.Get(k)
		}
	} else if len(raw) > 0 {
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	f.calls = append(f.calls, chatCall{Method: method, Token: token, Body: body})
	answer := func(v map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	if method != "oauth.v2.access" && token != f.token {
		answer(map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	switch method {
	case "oauth.v2.access":
		if body["code"] != "good-code" || body["client_secret"] != "chat-client-secret" {
			answer(map[string]any{"ok": false, "error": "invalid_code"})
			return
		}
		answer(map[string]any{"ok": true, "access_token": f.token, "token_type": "bot", "scope": "commands,chat:write,users:read,users:read.email",
			"bot_user_id": "UBOT", "app_id": "A1", "team": map[string]any{"id": "T1", "name": "Acme"}, "enterprise": nil,
			"authed_user": map[string]any{"id": "U1"}})
	case "users.info":
		email, ok := f.emails[body["user"].(string)]
		if !ok {
			answer(map[string]any{"ok": false, "error": "user_not_found"})
			return
		}
		answer(map[string]any{"ok": true, "user": map[string]any{"id": body["user"], "deleted": false, "profile": map[string]any{"email": email}}})
	case "chat.postMessage":
		f.ts++
		ts := "1700000000." + strconv.Itoa(f.ts)
		// Kept with the call, so a test can click the message's buttons.
		body["answeredTS"] = ts
		answer(map[string]any{"ok": true, "channel": body["channel"], "ts": ts})
	case "chat.update", "chat.postEphemeral", "views.open", "views.publish":
		answer(map[string]any{"ok": true})
	default:
		answer(map[string]any{"ok": false, "error": "unknown_method"})
	}
}

// of lists the calls of method.
func (f *fakeChat) of(method string) []chatCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []chatCall
	for _, c := range f.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeChat) setDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

func (f *fakeChat) setEmail(user, email string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.emails[user] = email
}

// buttons lists the action ids of a message body's buttons.
func buttons(body map[string]any) []string {
	var out []string
	blocks, _ := body["blocks"].([]any)
	for _, b := range blocks {
		els, _ := b.(map[string]any)["elements"].([]any)
		for _, e := range els {
			out = append(out, e.(map[string]any)["action_id"].(string))
		}
	}
	return out
}

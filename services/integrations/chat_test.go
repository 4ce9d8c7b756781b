package integrations

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/param"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

const (
	chatSigningSecret = "chat-signing-secret"
	chatTestKey       = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
)

// Baton users the chat users are linked to.
var (
	ann  = auth.Principal{Type: auth.TypeUser, ID: "u-ann", Name: "Ann", Email: "ann@example.com", Person: "u-ann", Teams: map[string]string{"rel": auth.RoleEditor}}
	own  = auth.Principal{Type: auth.TypeUser, ID: "u-own", Name: "Owen", Email: "owen@example.com", Person: "u-own", Teams: map[string]string{"rel": auth.RoleOwner}}
	rita = auth.Principal{Type: auth.TypeUser, ID: "u-rita", Name: "Rita", Email: "rita@example.com", Person: "u-rita", Teams: map[string]string{"rel": auth.RoleReader}}
)

// chatFixture is the integrations service on a database, with stand-ins for the other
// services and a fake chat platform.
type chatFixture struct {
	app      *fiber.App
	svc      *Service
	db       *mongo.Database
	signer   *auth.Signer
	chat     *fakeChat
	clock    *testkit.Clock
	runs     *fakeRuns
	settings *fakeSettings
	people   *fakePeople
	actions  *fakeActions
}

func newChatFixture(t testing.TB) *chatFixture {
	t.Helper()
	client, err := mongox.Connect(t.Context(), testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	return newChatFixtureOn(t, client.Database(testkit.Database(t)), "")
}

// newChatFixtureOn is the fixture on db, or on the SQLite file databaseURL names.
func newChatFixtureOn(t testing.TB, db *mongo.Database, databaseURL string) *chatFixture {
	t.Helper()
	var err error
	f := &chatFixture{db: db, chat: newFakeChat(t), clock: testkit.NewClock(time.Now()),
		runs: &fakeRuns{keys: map[string]string{}}, actions: &fakeActions{approvers: map[string]bool{"u-ann": true}},
		settings: &fakeSettings{st: identityapi.IntegrationSettings{Chat: identityapi.ChatSettings{
			ClientID: "chat-client", ClientSecret: "chat-client-secret", SigningSecret: chatSigningSecret}}},
		people: &fakePeople{byEmail: map[string]auth.Principal{ann.Email: ann, own.Email: own, rita.Email: rita}, inactive: map[string]bool{}}}
	f.signer, err = auth.NewSigner([]byte("integrations-test-key-0123456789"))
	require.NoError(t, err)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	workflows := fakeWorkflows{"rel": {{Name: "build", Status: "active"}, {Name: "old", Status: "inactive"}, {Name: "ship", Status: "active"}}}
	params := fakeParams{"rel/ship": {{Name: "version", Label: "Version", Required: true}, {Name: "note", Default: json.RawMessage(`"none"`)}}}
	f.svc, err = New(t.Context(), Config{SecretKey: chatTestKey, PublicURL: "https://baton.example.com", ChatAPIURL: f.chat.srv.URL,
		ChatAuthorizeURL: "https://chat.example.com/oauth/v2/authorize", DatabaseURL: databaseURL},
		Deps{DB: f.db, Signer: f.signer, Logger: logger, Runs: f.runs, Workflows: workflows, Settings: f.settings, People: f.people,
			Actions: f.actions, Params: params, Teams: knownTeams{"rel"}, Now: f.clock.Now})
	require.NoError(t, err)
	if f.svc.store.close != nil {
		t.Cleanup(func() { _ = f.svc.store.close() })
	}
	f.app = f.serve(f.svc)
	// The workspace's install, as the install flow leaves it.
	require.NoError(t, f.svc.areas.Chat.Store.SaveChatInstall(t.Context(), domain.ChatInstall{WorkspaceID: "T1", WorkspaceName: "Acme", BotUserID: "UBOT", BotToken: fakeBotToken}))
	f.chat.setEmail("U-ANN", ann.Email)
	f.chat.setEmail("U-OWN", own.Email)
	f.chat.setEmail("U-RITA", rita.Email)
	f.chat.setEmail("U-STRANGER", "nobody@example.com")
	return f
}

func (f *chatFixture) serve(svc *Service) *fiber.App {
	app := httpx.NewApp(httpx.Config{Name: Name, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), NoTracing: true})
	svc.Routes(app)
	return app
}

// replica is another replica of the service on the fixture's database.
func (f *chatFixture) replica(t *testing.T) *fiber.App {
	t.Helper()
	svc, err := New(t.Context(), Config{SecretKey: chatTestKey, ChatAPIURL: f.chat.srv.URL},
		Deps{DB: f.db, Signer: f.signer, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Runs: f.runs, Workflows: fakeWorkflows{},
			Settings: f.settings, People: f.people, Actions: f.actions, Params: fakeParams{}, Teams: knownTeams{"rel"}, Now: f.clock.Now})
	require.NoError(t, err)
	return f.serve(svc)
}

// chatReq is a request as the platform sends it: body signed at ts (now when zero).
type chatReq struct {
	path        string
	contentType string
	body        string
	ts          string
	sig         string // overrides the signature; "-" sends none
}

func (f *chatFixture) send(t testing.TB, r chatReq) (int, map[string]any) {
	t.Helper()
	if r.ts == "" {
		r.ts = strconv.FormatInt(f.clock.Now().Unix(), 10)
	}
	if r.sig == "" {
		r.sig = domain.SignChatRequest(chatSigningSecret, r.ts, []byte(r.body))
	}
	req := httptest.NewRequest(http.MethodPost, r.path, strings.NewReader(r.body))
	req.Header.Set("Content-Type", r.contentType)
	req.Header.Set("x-chat-request-timestamp", r.ts)
	if r.sig != "-" {
		req.Header.Set("x-chat-signature", r.sig)
	}
	return f.do(t, req)
}

func (f *chatFixture) do(t testing.TB, req *http.Request) (int, map[string]any) {
	t.Helper()
	require.NoError(t, f.signer.SetHeaders(auth.Anonymous, req.Header.Set))
	resp, err := f.app.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	}
	return resp.StatusCode, out
}

const formType = "application/x-www-form-urlencoded"

// command is a slash command's form as the platform posts it.
func command(user, channel, text, trigger string) string {
	return url.Values{"token": {"deprecated"}, "team_id": {"T1"}, "team_domain": {"acme"}, "channel_id": {channel}, "channel_name": {"ops"},
		"user_id": {user}, "user_name": {strings.ToLower(user)}, "command": {"/baton"}, "text": {text}, "api_app_id": {"A1"},
		"response_url": {"https://hooks.chat.example.com/commands/T1/1/abc"}, "trigger_id": {trigger}}.Encode()
}

func (f *chatFixture) command(t *testing.T, user, text string) (int, map[string]any) {
	t.Helper()
	return f.send(t, chatReq{path: "/api/v2/integration/chat/commands", contentType: formType, body: command(user, "C-OPS", text, "trig-"+strconv.FormatInt(time.Now().UnixNano(), 10))})
}

// interaction is an interactivity request's form.
func interaction(payload map[string]any) string {
	raw, _ := json.Marshal(payload)
	return url.Values{"payload": {string(raw)}}.Encode()
}

func click(user, actionID, value string) string {
	return clickIn(user, actionID, value, "C-OPS", "1700000000.1")
}

// clickIn is a click on the button of message ts of channel.
func clickIn(user, actionID, value, channel, ts string) string {
	return interaction(map[string]any{"type": "block_actions", "team": map[string]any{"id": "T1", "domain": "acme"},
		"user": map[string]any{"id": user, "team_id": "T1"}, "api_app_id": "A1", "trigger_id": "trig-click",
		"container": map[string]any{"type": "message", "message_ts": ts, "channel_id": channel},
		"channel":   map[string]any{"id": channel, "name": "ops"}, "message": map[string]any{"ts": ts, "text": "…"},
		"response_url": "https://hooks.chat.example.com/actions/T1/1/abc",
		"actions":      []any{map[string]any{"type": "button", "action_id": actionID, "block_id": "b1", "value": value, "action_ts": "1700000001.0"}}})
}

func TestChatVerification(t *testing.T) {
	t.Parallel()
	f := newChatFixture(t)
	now := f.clock.Now()
	body := command("U-ANN", "C-OPS", "run rel/build", "trig-verify")
	ts := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	tests := []struct {
		name string
		req  chatReq
		want int
	}{
		{"bad signature", chatReq{sig: domain.SignChatRequest("wrong", ts(0), []byte(body))}, http.StatusUnauthorized},
		{"missing signature", chatReq{sig: "-"}, http.StatusUnauthorized},
		{"stale", chatReq{ts: ts(-6 * time.Minute)}, http.StatusUnauthorized},
		{"future", chatReq{ts: ts(6 * time.Minute)}, http.StatusUnauthorized},
		{"body altered after signing", chatReq{sig: domain.SignChatRequest(chatSigningSecret, ts(0), []byte(body+"x"))}, http.StatusUnauthorized},
		{"good", chatReq{}, http.StatusOK},
		{"replay", chatReq{}, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		tt.req.path, tt.req.contentType, tt.req.body = "/api/v2/integration/chat/commands", formType, body
		if tt.req.ts == "" {
			tt.req.ts = ts(0)
		}
		code, out := f.send(t, tt.req)
		assert.Equal(t, tt.want, code, "%s: %v", tt.name, out)
		if tt.want == http.StatusUnauthorized {
			assert.Equal(t, "INTEGRATION_INVALID_SIGNATURE", out["reason"], tt.name)
		}
	}
	assert.Len(t, f.runs.all(), 1, "only the good request ran")

	// Another replica refuses the replay too.
	other := f.replica(t)
	req := httptest.NewRequest(http.MethodPost, "/api/v2/integration/chat/commands", strings.NewReader(body))
	req.Header.Set("Content-Type", formType)
	req.Header.Set("x-chat-request-timestamp", ts(0))
	req.Header.Set("x-chat-signature", domain.SignChatRequest(chatSigningSecret, ts(0), []byte(body)))
	require.NoError(t, f.signer.SetHeaders(auth.Anonymous, req.Header.Set))
	resp, err := other.Test(req, -1)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Len(t, f.runs.all(), 1)

	// Signatures are kept past the window, then swept.
	store := f.svc.areas.Chat.Store.(interface {
		Sweep(ctx context.Context, now time.Time) error
	})
	sigs := f.db.Collection("chat_signatures")
	n, err := sigs.CountDocuments(t.Context(), bson.M{})
	require.NoError(t, err)
	require.Positive(t, n)
	require.NoError(t, store.Sweep(t.Context(), now.Add(domain.ChatSignatureWindow)))
	n2, err := sigs.CountDocuments(t.Context(), bson.M{})
	require.NoError(t, err)
	assert.Equal(t, n, n2, "still within reach of a replay")
	require.NoError(t, store.Sweep(t.Context(), now.Add(2*domain.ChatSignatureWindow+time.Second)))
	n2, err = sigs.CountDocuments(t.Context(), bson.M{})
	require.NoError(t, err)
	assert.Zero(t, n2)

	// Every chat endpoint, and /webhook with the chat signature, is verified.
	for _, path := range []string{"/api/v2/integration/chat/events", "/api/v2/integration/chat/interactivity", "/api/v2/webhook"} {
		code, out := f.send(t, chatReq{path: path, contentType: "application/json", body: `{"type":"url_verification","challenge":"c"}`, sig: "v0=00"})
		assert.Equal(t, http.StatusUnauthorized, code, "%s: %v", path, out)
	}

	// Malformed bodies, signed: 400, nothing run.
	malformed := []chatReq{
		{path: "/api/v2/integration/chat/events", contentType: "application/json", body: `{"type":`},
		{path: "/api/v2/integration/chat/events", contentType: "application/json", body: `[]`},
		{path: "/api/v2/integration/chat/events", contentType: "application/json", body: `{}`},
		{path: "/api/v2/integration/chat/commands", contentType: formType, body: "text=run+rel%2Fbuild"},
		{path: "/api/v2/integration/chat/commands", contentType: formType, body: "%zz"},
		{path: "/api/v2/integration/chat/interactivity", contentType: formType, body: "payload=%7Bnot+json"},
		{path: "/api/v2/integration/chat/interactivity", contentType: formType, body: "nothing=here"},
		{path: "/api/v2/integration/chat/interactivity", contentType: formType, body: interaction(map[string]any{"type": "block_actions"})},
	}
	for _, r := range malformed {
		code, out := f.send(t, r)
		assert.Equal(t, http.StatusBadRequest, code, "%s %q: %v", r.path, r.body, out)
	}
	assert.Len(t, f.runs.all(), 1)

	// No signing secret: every request is refused.
	f.settings.set(func(st *identityapi.IntegrationSettings) { st.Chat.SigningSecret = "" })
	code, out := f.command(t, "U-ANN", "run rel/build")
	assert.Equal(t, http.StatusUnauthorized, code, "%v", out)
	assert.Len(t, f.runs.all(), 1)
}

func TestChatInstall(t *testing.T) {
	t.Parallel()
	f := newChatFixture(t)
	get := func(path string) *http.Response {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		require.NoError(t, f.signer.SetHeaders(auth.Anonymous, req.Header.Set))
		resp, err := f.app.Test(req, -1)
		require.NoError(t, err)
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}

	resp := get("/api/v2/integration/chat/install")
	require.Equal(t, http.StatusFound, resp.StatusCode)
	to, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	assert.Equal(t, "chat.example.com", to.Host)
	assert.Equal(t, "/oauth/v2/authorize", to.Path)
	q := to.Query()
	assert.Equal(t, "chat-client", q.Get("client_id"))
	assert.Equal(t, "commands,chat:write,users:read,users:read.email", q.Get("scope"))
	assert.Equal(t, "https://baton.example.com/api/v2/integration/chat/auth", q.Get("redirect_uri"))
	state := q.Get("state")
	require.NotEmpty(t, state)

	auth := func(code, state string) (int, map[string]any) {
		req := httptest.NewRequest(http.MethodGet, "/api/v2/integration/chat/auth?"+url.Values{"code": {code}, "state": {state}}.Encode(), nil)
		return f.do(t, req)
	}
	tests := []struct {
		name   string
		code   string
		state  string
		down   bool
		want   int
		reason string
	}{
		{"bad state", "good-code", state + "x", false, http.StatusUnauthorized, "INTEGRATION_INVALID_SIGNATURE"},
		{"no state", "good-code", "", false, http.StatusUnauthorized, "INTEGRATION_INVALID_SIGNATURE"},
		{"the platform refuses the code", "bad-code", state, false, http.StatusBadRequest, "REQUEST_INVALID"},
		{"the platform is down", "good-code", state, true, http.StatusServiceUnavailable, "DEPENDENCY_UNAVAILABLE"},
		{"good", "good-code", state, false, http.StatusOK, ""},
	}
	for _, tt := range tests {
		f.chat.setDown(tt.down)
		code, out := auth(tt.code, tt.state)
		assert.Equal(t, tt.want, code, "%s: %v", tt.name, out)
		if tt.reason != "" {
			assert.Equal(t, tt.reason, out["reason"], tt.name)
		}
	}
	calls := f.chat.of("oauth.v2.access")
	require.NotEmpty(t, calls)
	assert.Equal(t, "https://baton.example.com/api/v2/integration/chat/auth", calls[len(calls)-1].Body["redirect_uri"])

	// The bot token is sealed at rest, and opens to the token.
	var doc bson.M
	require.NoError(t, f.db.Collection("chat_installs").FindOne(t.Context(), bson.M{"_id": "T1"}).Decode(&doc))
	assert.True(t, secrets.IsSealed(doc["botToken"].(string)))
	assert.NotContains(t, fmt.Sprint(doc), fakeBotToken)
	in, err := f.svc.areas.Chat.Store.FindChatInstall(t.Context(), "T1")
	require.NoError(t, err)
	assert.Equal(t, fakeBotToken, in.BotToken)
	assert.Equal(t, "Acme", in.WorkspaceName)

	// A state expires after 10 minutes.
	f.clock.Add(11 * time.Minute)
	code, out := auth("good-code", state)
	assert.Equal(t, http.StatusUnauthorized, code, "%v", out)

	// Without a client id the chat integration is not configured.
	f.settings.set(func(st *identityapi.IntegrationSettings) { st.Chat.ClientID = "" })
	assert.Equal(t, http.StatusNotFound, get("/api/v2/integration/chat/install").StatusCode)
}

func TestChatCommands(t *testing.T) {
	t.Parallel()
	f := newChatFixture(t)
	tests := []struct {
		name      string
		user      string
		text      string
		inChannel bool
		contains  string
		runs      int // runs submitted by the command
	}{
		{"help", "U-ANN", "help", false, "/baton run <team>/<workflow>", 0},
		{"unknown verb is help", "U-ANN", "dance", false, "/baton list <team>", 0},
		{"empty is help", "U-STRANGER", "", false, "/baton help", 0},
		{"run", "U-ANN", `run rel/build env=prod msg="hello world"`, true, "started *rel/build*", 1},
		{"bad grammar", "U-ANN", "run rel", false, "Name the workflow as <team>/<workflow>", 0},
		{"a reader may not run", "U-RITA", "run rel/build", false, "may not run", 0},
		{"another team", "U-ANN", "run ops/build", false, "may not run", 0},
		{"an unknown email", "U-STRANGER", "run rel/build", false, "No active Baton user has your chat email (nobody@example.com)", 0},
		{"a chat user the platform does not know", "U-GHOST", "run rel/build", false, "cannot read your chat profile", 0},
		{"the trigger is off", "U-ANN", "run rel/off", false, "trigger is disabled", 0},
		{"required params open the modal", "U-ANN", "run rel/ship", false, "fill in the form", 0},
		{"required params given", "U-ANN", "run rel/ship version=1.2", true, "started *rel/ship*", 1},
		{"a reader lists nothing to run", "U-RITA", "list rel", false, "no workflow you can run", 0},
		{"list another team", "U-ANN", "list ops", false, "may not read team 'ops'", 0},
		{"notify by an editor", "U-ANN", "notify rel", false, "Only an owner", 0},
		{"notify by the owner", "U-OWN", "notify rel", true, "will be posted here", 0},
	}
	for _, tt := range tests {
		before := len(f.runs.all())
		code, out := f.command(t, tt.user, tt.text)
		require.Equal(t, http.StatusOK, code, "%s: %v", tt.name, out)
		want := "ephemeral"
		if tt.inChannel {
			want = "in_channel"
		}
		assert.Equal(t, want, out["response_type"], tt.name)
		assert.Contains(t, out["text"], tt.contains, tt.name)
		assert.Len(t, f.runs.all(), before+tt.runs, tt.name)
	}

	runs := f.runs.all()
	require.Len(t, runs, 2)
	r := runs[0]
	assert.Equal(t, "rel/build", r.ref)
	assert.Equal(t, "chat", r.req.Trigger)
	assert.Equal(t, map[string]any{"env": "prod", "msg": "hello world"}, r.req.Params)
	assert.Equal(t, runsapi.Initiator{Type: auth.TypeUser, ID: "u-ann", Name: "Ann", Person: "u-ann"}, r.req.InitiatedBy)
	assert.True(t, strings.HasPrefix(r.req.IdempotencyKey, "chat:T1:trig-"), r.req.IdempotencyKey)
	assert.Equal(t, map[string]string{domain.ChatChannelLabel: "T1/C-OPS"}, r.req.Labels)
	ch, err := f.svc.areas.Chat.Store.FindRunChannel(t.Context(), "run-1")
	require.NoError(t, err)
	assert.Equal(t, domain.ChatChannel{WorkspaceID: "T1", ChannelID: "C-OPS"}, ch)

	// The modal asks for every param, the required ones not optional.
	views := f.chat.of("views.open")
	require.Len(t, views, 1)
	view := views[0].Body["view"].(map[string]any)
	assert.Equal(t, "modal", view["type"])
	assert.Equal(t, domain.RunModalID, view["callback_id"])
	blocks := view["blocks"].([]any)
	require.Len(t, blocks, 2)
	assert.Equal(t, "version", blocks[0].(map[string]any)["block_id"])
	assert.Equal(t, false, blocks[0].(map[string]any)["optional"])
	assert.Equal(t, "none", blocks[1].(map[string]any)["element"].(map[string]any)["initial_value"])

	// An editor is listed the active workflows.
	code, out := f.command(t, "U-ANN", "list rel")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, out["text"], "`rel/build`")
	assert.Contains(t, out["text"], "`rel/ship`")
	assert.NotContains(t, out["text"], "rel/old")

	tc, err := f.svc.areas.Chat.Store.FindTeamChannel(t.Context(), "rel")
	require.NoError(t, err)
	assert.Equal(t, "C-OPS", tc.ChannelID)
	// GET /integration's chat entry: installed, the team's channel its ref, the install
	// link only for whoever may install.
	in, err := f.svc.areas.Chat.Integration(t.Context(), "rel", true)
	require.NoError(t, err)
	assert.Equal(t, "linked", in.Status)
	assert.Equal(t, "T1/C-OPS", in.Ref)
	assert.Equal(t, "https://baton.example.com/api/v2/integration/chat/install", in.Link)
	in, err = f.svc.areas.Chat.Integration(t.Context(), "other", false)
	require.NoError(t, err)
	assert.Empty(t, in.Ref)
	assert.Empty(t, in.Link)
	code, out = f.command(t, "U-OWN", "notify rel off")
	require.Equal(t, http.StatusOK, code, "%v", out)
	_, err = f.svc.areas.Chat.Store.FindTeamChannel(t.Context(), "rel")
	assert.ErrorIs(t, err, domain.ErrChatNotFound)
}

func TestChatLinking(t *testing.T) {
	t.Parallel()
	f := newChatFixture(t)
	code, out := f.command(t, "U-RITA", "run rel/build")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, out["text"], "may not run")
	link, err := f.svc.areas.Chat.Store.FindChatLink(t.Context(), "T1", "U-RITA")
	require.NoError(t, err)
	assert.Equal(t, domain.ChatLink{WorkspaceID: "T1", ChatUserID: "U-RITA", UserID: "u-rita", Email: rita.Email, LinkedAt: link.LinkedAt}, link)

	// Rita becomes an editor: within a few seconds she runs, without a second lookup on
	// the platform.
	promoted := rita
	promoted.Teams = map[string]string{"rel": auth.RoleEditor}
	f.people.set(rita.Email, promoted)
	f.clock.Add(4 * time.Second)
	code, out = f.command(t, "U-RITA", "run rel/build")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "in_channel", out["response_type"], "%v", out)
	assert.Len(t, f.chat.of("users.info"), 1)

	// Deactivated in Baton: refused, nothing run.
	f.people.deactivate(rita.Email)
	f.clock.Add(4 * time.Second)
	before := len(f.runs.all())
	code, out = f.command(t, "U-RITA", "run rel/build")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, out["text"], "No active Baton user")
	assert.Len(t, f.runs.all(), before)

	// Without an install, the bot token of settings looks users up.
	f.settings.set(func(st *identityapi.IntegrationSettings) { st.Chat.BotToken = fakeBotToken })
	code, out = f.send(t, chatReq{path: "/api/v2/integration/chat/commands", contentType: formType,
		body: strings.Replace(command("U-ANN", "C-OPS", "run rel/build", "trig-t2"), "team_id=T1", "team_id=T2", 1)})
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "in_channel", out["response_type"], "%v", out)
}

func TestChatEvents(t *testing.T) {
	t.Parallel()
	f := newChatFixture(t)
	send := func(body string) (int, map[string]any) {
		return f.send(t, chatReq{path: "/api/v2/integration/chat/events", contentType: "application/json", body: body})
	}
	code, out := send(`{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", out["challenge"])

	// The same challenge through /webhook, told apart by the chat signature.
	code, out = f.send(t, chatReq{path: "/api/v2/webhook", contentType: "application/json", body: `{"type":"url_verification","challenge":"w"}`})
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "w", out["challenge"])

	code, _ = send(`{"token":"x","team_id":"T1","api_app_id":"A1","type":"event_callback","event_id":"Ev1","event_time":1700000000,
		"event":{"type":"app_home_opened","user":"U-ANN","channel":"D1","tab":"home","event_ts":"1700000000.1"}}`)
	require.Equal(t, http.StatusOK, code)
	homes := f.chat.of("views.publish")
	require.Len(t, homes, 1)
	assert.Equal(t, "U-ANN", homes[0].Body["user_id"])
	view := homes[0].Body["view"].(map[string]any)
	assert.Equal(t, "home", view["type"])
	raw, _ := json.Marshal(view)
	assert.Contains(t, string(raw), "you act as Ann")
	assert.Contains(t, string(raw), "*rel* (editor)")

	code, out = send(`{"type":"event_callback","team_id":"T1","event":{"type":"reaction_added","user":"U-ANN"}}`)
	assert.Equal(t, http.StatusOK, code, "%v", out)
	code, out = send(`{"type":"app_rate_limited","team_id":"T1"}`)
	assert.Equal(t, http.StatusOK, code, "%v", out)
	assert.Len(t, f.chat.of("views.publish"), 1)
}

func TestChatInteractivity(t *testing.T) {
	t.Parallel()
	f := newChatFixture(t)
	post := func(body string) (int, map[string]any) {
		return f.send(t, chatReq{path: "/api/v2/integration/chat/interactivity", contentType: formType, body: body})
	}

	// The run modal submitted: a run as the user, announced in the channel it came from.
	meta := `{"team":"rel","workflow":"ship","channel":"C-OPS"}`
	code, out := post(interaction(map[string]any{"type": "view_submission", "team": map[string]any{"id": "T1"}, "user": map[string]any{"id": "U-ANN"},
		"trigger_id": "trig-modal", "view": map[string]any{"id": "V1", "type": "modal", "callback_id": domain.RunModalID, "private_metadata": meta,
			"state": map[string]any{"values": map[string]any{
				"version": map[string]any{"version": map[string]any{"type": "plain_text_input", "value": "2.0"}},
				"note":    map[string]any{"note": map[string]any{"type": "plain_text_input", "value": nil}}}}}}))
	require.Equal(t, http.StatusOK, code, "%v", out)
	runs := f.runs.all()
	require.Len(t, runs, 1)
	assert.Equal(t, "rel/ship", runs[0].ref)
	assert.Equal(t, "chat", runs[0].req.Trigger)
	assert.Equal(t, map[string]any{"version": "2.0"}, runs[0].req.Params)
	assert.Equal(t, "u-ann", runs[0].req.InitiatedBy.ID)
	posts := f.chat.of("chat.postMessage")
	require.Len(t, posts, 1)
	assert.Equal(t, "C-OPS", posts[0].Body["channel"])
	assert.Contains(t, posts[0].Body["text"], "run-1")

	// Approve as an approver: decided as the linked user, the message shows the vote.
	value := domain.ActionValue("rel", "act-1")
	code, out = post(click("U-ANN", domain.ActionApprove, value))
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, []decision{{as: "u-ann", team: "rel", id: "act-1", approved: true}}, f.actions.all())
	updates := f.chat.of("chat.update")
	require.Len(t, updates, 1)
	assert.Equal(t, "1700000000.1", updates[0].Body["ts"])
	assert.Contains(t, updates[0].Body["text"], "approved by Ann")
	assert.Empty(t, buttons(updates[0].Body), "one approval decides an action of one approver")

	// A click by someone the actions API refuses: told alone, the message unchanged.
	code, out = post(click("U-RITA", domain.ActionReject, value))
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Len(t, f.actions.all(), 1)
	eph := f.chat.of("chat.postEphemeral")
	require.Len(t, eph, 1)
	assert.Equal(t, "U-RITA", eph[0].Body["user"])
	assert.Contains(t, eph[0].Body["text"], "not an approver")
	assert.Len(t, f.chat.of("chat.update"), 1)

	// Unlinked: told so, nothing decided.
	code, _ = post(click("U-STRANGER", domain.ActionApprove, value))
	require.Equal(t, http.StatusOK, code)
	assert.Len(t, f.actions.all(), 1)
	assert.Len(t, f.chat.of("chat.postEphemeral"), 2)

	// A button naming no action is malformed.
	code, _ = post(click("U-ANN", domain.ActionApprove, "nothing"))
	assert.Equal(t, http.StatusBadRequest, code)
	// Other interactions are ignored.
	code, _ = post(click("U-ANN", "some_other_button", "x"))
	assert.Equal(t, http.StatusOK, code)
	assert.Len(t, f.actions.all(), 1)
}

func TestChatPostsBack(t *testing.T) {
	t.Parallel()
	f := newChatFixture(t)
	handle := chatRunEvents(f.svc.areas.Chat)
	ctx := t.Context()
	store := f.svc.areas.Chat.Store
	require.NoError(t, store.SaveRunChannel(ctx, "run-chat", domain.ChatChannel{WorkspaceID: "T1", ChannelID: "C-RUN"}, f.clock.Now().Add(time.Hour)))
	require.NoError(t, store.SetTeamChannel(ctx, "rel", &domain.ChatChannel{WorkspaceID: "T1", ChannelID: "C-TEAM"}))

	runEvent := func(id, status, phase string) error {
		run := events.WorkflowRun{ID: id, Team: "rel", WorkflowName: "build", WorkflowRef: "build", Status: status, Phase: phase, Trigger: "chat"}
		e, err := events.New(id+"/"+status+"/"+phase, events.Source("runs"), events.TypeStatusWorkflowRun, "/workflowrun/"+id+"/status/"+status, run)
		require.NoError(t, err)
		return handle(ctx, e)
	}
	actionEvent := func(a events.Action) error {
		e, err := events.New(a.ID+"/"+a.Status, events.Source("runs"), events.TypeStatusAction, "/action/"+a.ID+"/status/"+a.Status, a)
		require.NoError(t, err)
		return handle(ctx, e)
	}

	// A run started from chat: its end is posted once, however often it is delivered.
	require.NoError(t, runEvent("run-chat", "running", "running"))
	assert.Empty(t, f.chat.of("chat.postMessage"), "only ends are posted")
	require.NoError(t, runEvent("run-chat", "succeeded", "completed"))
	require.NoError(t, runEvent("run-chat", "succeeded", "completed"))
	posts := f.chat.of("chat.postMessage")
	require.Len(t, posts, 1)
	assert.Equal(t, "C-RUN", posts[0].Body["channel"])
	assert.Contains(t, posts[0].Body["text"], "run-chat")
	assert.Contains(t, posts[0].Body["text"], "succeeded")
	// Other runs are not posted.
	require.NoError(t, runEvent("run-api", "failed", "completed"))
	assert.Len(t, f.chat.of("chat.postMessage"), 1)

	// An approval of the chat run goes to its channel and the team's, with buttons.
	act := events.Action{ID: "act-1", Type: "approval", Status: "submitted", Team: "rel", WorkflowRef: "ship", WorkflowName: "ship",
		WorkflowRunRef: "run-chat", TaskName: "approve", Instructions: "Check staging first.", ApproverGroupRef: "leads", NumberOfApprovers: 2}
	require.NoError(t, actionEvent(act))
	require.NoError(t, actionEvent(act))
	posts = f.chat.of("chat.postMessage")[1:]
	require.Len(t, posts, 2)
	for _, p := range posts {
		assert.Equal(t, []string{domain.ActionApprove, domain.ActionReject}, buttons(p.Body))
		assert.Contains(t, p.Body["text"], "Check staging first.")
		raw, _ := json.Marshal(p.Body["blocks"])
		assert.Contains(t, string(raw), `"value":"rel/act-1"`)
	}
	assert.ElementsMatch(t, []any{"C-RUN", "C-TEAM"}, []any{posts[0].Body["channel"], posts[1].Body["channel"]})

	// An action of another team without a channel is not posted.
	other := act
	other.ID, other.Team, other.WorkflowRunRef = "act-2", "ops", "run-ops"
	require.NoError(t, actionEvent(other))
	assert.Len(t, f.chat.of("chat.postMessage"), 3)

	// Ann approves in the run's channel: one of two approvals, so the buttons stay.
	runPost := posts[0]
	if runPost.Body["channel"] != "C-RUN" {
		runPost = posts[1]
	}
	code, out := f.send(t, chatReq{path: "/api/v2/integration/chat/interactivity", contentType: formType,
		body: clickIn("U-ANN", domain.ActionApprove, "rel/act-1", "C-RUN", runPost.Body["answeredTS"].(string))})
	require.Equal(t, http.StatusOK, code, "%v", out)
	updates := f.chat.of("chat.update")
	require.Len(t, updates, 1)
	assert.Equal(t, runPost.Body["answeredTS"], updates[0].Body["ts"])
	assert.Contains(t, updates[0].Body["text"], "Check staging first.")
	assert.Contains(t, updates[0].Body["text"], "approved by Ann")
	assert.Equal(t, []string{domain.ActionApprove, domain.ActionReject}, buttons(updates[0].Body))

	// Decided: both messages show the outcome, without buttons; once.
	act.Status = "approved"
	require.NoError(t, actionEvent(act))
	require.NoError(t, actionEvent(act))
	updates = f.chat.of("chat.update")[1:]
	require.Len(t, updates, 2)
	for _, u := range updates {
		assert.Empty(t, buttons(u.Body))
		assert.Contains(t, u.Body["text"], "*approved*")
	}
	// A click that comes after leaves the outcome alone.
	f.clock.Add(time.Second)
	code, out = f.send(t, chatReq{path: "/api/v2/integration/chat/interactivity", contentType: formType,
		body: clickIn("U-ANN", domain.ActionApprove, "rel/act-1", "C-RUN", runPost.Body["answeredTS"].(string))})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Len(t, f.chat.of("chat.update"), 3)

	// The platform down: the handler fails, so the consumer tries again; once it is back,
	// the message is posted.
	require.NoError(t, store.SaveRunChannel(ctx, "run-2", domain.ChatChannel{WorkspaceID: "T1", ChannelID: "C-RUN"}, f.clock.Now().Add(time.Hour)))
	f.chat.setDown(true)
	assert.Error(t, runEvent("run-2", "failed", "completed"))
	f.chat.setDown(false)
	require.NoError(t, runEvent("run-2", "failed", "completed"))
	assert.Len(t, f.chat.of("chat.postMessage"), 4)

	// A chat run whose first event comes before the submit's record: its label names the
	// channel, so its approval and its end are posted there. A label on a run of another
	// trigger names nothing.
	labelled := func(id, trigger, status, phase string) error {
		run := events.WorkflowRun{ID: id, Team: "ops", WorkflowName: "build", Status: status, Phase: phase, Trigger: trigger,
			Labels: map[string]string{domain.ChatChannelLabel: "T1/C-LABEL"}}
		e, err := events.New(id+"/"+status+"/"+phase, events.Source("runs"), events.TypeStatusWorkflowRun, "/workflowrun/"+id+"/status/"+status, run)
		require.NoError(t, err)
		return handle(ctx, e)
	}
	require.NoError(t, labelled("run-fast", "chat", "running", "running"))
	require.NoError(t, actionEvent(events.Action{ID: "act-3", Type: "approval", Status: "submitted", Team: "ops", WorkflowRunRef: "run-fast", TaskName: "approve"}))
	require.NoError(t, labelled("run-fast", "chat", "succeeded", "completed"))
	require.NoError(t, labelled("run-forged", "manual", "running", "running"))
	require.NoError(t, actionEvent(events.Action{ID: "act-4", Type: "approval", Status: "submitted", Team: "ops", WorkflowRunRef: "run-forged", TaskName: "approve"}))
	require.NoError(t, labelled("run-forged", "manual", "succeeded", "completed"))
	posts = f.chat.of("chat.postMessage")[4:]
	require.Len(t, posts, 2)
	for _, p := range posts {
		assert.Equal(t, "C-LABEL", p.Body["channel"])
		assert.Contains(t, p.Body["text"], "run-fast")
	}

	// A refusal (a workspace without the app) is dropped: trying again cannot mend it.
	require.NoError(t, store.SaveRunChannel(ctx, "run-3", domain.ChatChannel{WorkspaceID: "T-GONE", ChannelID: "C"}, f.clock.Now().Add(time.Hour)))
	assert.NoError(t, runEvent("run-3", "failed", "completed"))
	assert.Len(t, f.chat.of("chat.postMessage"), 6)

	// A manual action is posted with buttons too.
	require.NoError(t, actionEvent(events.Action{ID: "act-5", Type: "manual", Status: "submitted", Team: "ops", WorkflowRunRef: "run-chat", TaskName: "check",
		Instructions: "Look at the dashboard."}))
	posts = f.chat.of("chat.postMessage")
	require.Len(t, posts, 7)
	assert.Equal(t, "C-RUN", posts[6].Body["channel"])
	assert.Contains(t, posts[6].Body["text"], "waits for manual")
	assert.Equal(t, []string{domain.ActionApprove, domain.ActionReject}, buttons(posts[6].Body))
}

// Stand-ins for the other services.

type submitted struct {
	ref string
	req runsapi.SubmitRun
}

// fakeRuns makes runs "run-<n>"; a key used before answers its run. Workflow "off" has
// its trigger disabled.
type fakeRuns struct {
	mu   sync.Mutex
	subs []submitted
	keys map[string]string
}

func (r *fakeRuns) Submit(_ context.Context, team, workflow string, req runsapi.SubmitRun) (runsapi.SubmittedRun, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if workflow == "off" {
		return runsapi.SubmittedRun{}, apperr.New(apperr.WorkflowRunTriggerDisabled, "The manual trigger is disabled.")
	}
	if id, ok := r.keys[req.IdempotencyKey]; ok {
		return runsapi.SubmittedRun{RunState: runsapi.RunState{ID: id}}, nil
	}
	r.subs = append(r.subs, submitted{ref: team + "/" + workflow, req: req})
	id := "run-" + strconv.Itoa(len(r.subs))
	r.keys[req.IdempotencyKey] = id
	return runsapi.SubmittedRun{RunState: runsapi.RunState{ID: id, Status: "ready", Phase: "queued"}, Created: true}, nil
}

func (r *fakeRuns) all() []submitted {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]submitted(nil), r.subs...)
}

type fakeWorkflows map[string][]workflowsapi.TriggeredWorkflow

func (w fakeWorkflows) Triggers(_ context.Context, team, _, _ string) (workflowsapi.TriggeredWorkflows, error) {
	return workflowsapi.TriggeredWorkflows{Workflows: w[team]}, nil
}

type fakeParams map[string][]param.Param

func (p fakeParams) Params(_ context.Context, team, workflow string) ([]param.Param, error) {
	return p[team+"/"+workflow], nil
}

type fakeSettings struct {
	mu sync.Mutex
	st identityapi.IntegrationSettings
}

func (s *fakeSettings) IntegrationSettings(context.Context) (identityapi.IntegrationSettings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st, nil
}

func (s *fakeSettings) set(fn func(*identityapi.IntegrationSettings)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.st)
}

type fakePeople struct {
	mu       sync.Mutex
	byEmail  map[string]auth.Principal
	inactive map[string]bool
}

func (p *fakePeople) ByEmail(_ context.Context, email string) (auth.Principal, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inactive[email] {
		return auth.Principal{}, apperr.New(apperr.Unauthenticated, "The user is inactive.")
	}
	pr, ok := p.byEmail[email]
	if !ok {
		return auth.Principal{}, apperr.New(apperr.UserNotFound, "No user has the email '%s'.", email)
	}
	return pr, nil
}

func (p *fakePeople) set(email string, pr auth.Principal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.byEmail[email] = pr
}

func (p *fakePeople) deactivate(email string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inactive[email] = true
}

type decision struct {
	as       string
	team, id string
	approved bool
}

// fakeActions lets approvers decide and refuses everyone else, as the actions API does
// for a user outside the approver group.
type fakeActions struct {
	mu        sync.Mutex
	decided   []decision
	approvers map[string]bool
}

func (a *fakeActions) Decide(_ context.Context, as auth.Principal, team, id string, approved bool, _ string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.approvers[as.ID] {
		return apperr.New(apperr.PermissionDenied, "You are not an approver of this action.")
	}
	a.decided = append(a.decided, decision{as: as.ID, team: team, id: id, approved: approved})
	return nil
}

func (a *fakeActions) all() []decision {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]decision(nil), a.decided...)
}

// BenchmarkChatCommand is one `/baton run` from a linked user: the signature checked and
// recorded against replays, the user's principal (cached), the run submitted (a stand-in)
// and its channel recorded, the answer written.
func BenchmarkChatCommand(b *testing.B) {
	f := newChatFixture(b)
	code, out := f.send(b, chatReq{path: "/api/v2/integration/chat/commands", contentType: formType, body: command("U-ANN", "C-OPS", "run rel/build", "warm")})
	require.Equal(b, http.StatusOK, code, "%v", out)
	b.ResetTimer()
	for i := range b.N {
		code, out := f.send(b, chatReq{path: "/api/v2/integration/chat/commands", contentType: formType,
			body: command("U-ANN", "C-OPS", "run rel/build n="+strconv.Itoa(i), "trig-"+strconv.Itoa(i))})
		if code != http.StatusOK || out["response_type"] != "in_channel" {
			b.Fatalf("%d %v", code, out)
		}
	}
}

// knownTeams is Teams knowing the teams listed.
type knownTeams []string

func (k knownTeams) Team(_ context.Context, name string) error {
	if slices.Contains(k, name) {
		return nil
	}
	return apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", name)
}

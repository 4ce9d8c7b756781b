package identity_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/identity"
)

// The callers of the system tests.
var (
	sysAdmin    = auth.Principal{Type: auth.TypeGlobal, ID: "bootstrap", Roles: []string{auth.RoleAdmin}}
	sysOperator = auth.Principal{Type: auth.TypeUser, ID: "64b000000000000000000002", Roles: []string{auth.RoleOperator}}
	sysUser     = auth.Principal{Type: auth.TypeUser, ID: "64b000000000000000000001", Email: "ann@example.com",
		Teams: map[string]string{"alpha": auth.RoleEditor}}
	sysTeamToken = auth.Principal{Type: auth.TypeTeam, ID: "64b0000000000000000000aa", Team: "alpha",
		TokenID: "64b0000000000000000000aa", Permissions: []string{"**/read", "**/write", "**/action"}}
	sysService = auth.Principal{Type: auth.TypeService, ID: "gateway"}
)

// nullPublisher drops events: these tests own no team events, so no broker is needed.
type nullPublisher struct{}

func (nullPublisher) Publish(context.Context, string, string, event.Event) error { return nil }

// sysFixture is identity on its own database, restartable with another configuration.
type sysFixture struct {
	client *mongo.Client
	db     *mongo.Database
	signer *auth.Signer
	key    string
	app    *fiber.App
	logs   *syncBuffer
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newSysFixture(t *testing.T) *sysFixture {
	t.Helper()
	client, err := mongox.Connect(context.Background(), testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	signer, err := auth.NewSigner([]byte("identity-system-test-key-0123456789"))
	require.NoError(t, err)
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	return &sysFixture{client: client, db: client.Database(testkit.Database(t)), signer: signer, key: key, logs: &syncBuffer{}}
}

// start builds identity over the fixture's database with cfg (the fixture's secret key
// unless cfg names one) and serves it from f.app.
func (f *sysFixture) start(t *testing.T, cfg identity.Config) {
	t.Helper()
	require.NoError(t, f.tryStart(cfg))
}

func (f *sysFixture) tryStart(cfg identity.Config) error {
	if cfg.SecretKey == "" {
		cfg.SecretKey = f.key
	}
	logger := slog.New(slog.NewTextHandler(f.logs, nil))
	svc, err := identity.New(context.Background(), cfg, identity.Deps{
		DB: f.db, Publisher: nullPublisher{}, Signer: f.signer, Logger: logger,
	})
	if err != nil {
		return err
	}
	app := httpx.NewApp(httpx.Config{Name: "identity", Logger: logger})
	svc.Routes(app)
	f.app = app
	return nil
}

// do sends a request as p (no principal headers at all when p is nil) and returns the
// status and the raw body.
func (f *sysFixture) do(t *testing.T, p *auth.Principal, method, path, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if p != nil {
		require.NoError(t, f.signer.SetHeaders(*p, req.Header.Set))
	}
	resp, err := f.app.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(raw)
}

// json sends a request as p and decodes the answer into a value of type T.
func sysCall[T any](t *testing.T, f *sysFixture, p auth.Principal, method, path, body string) (int, T) {
	t.Helper()
	code, raw := f.do(t, &p, method, path, body)
	var out T
	if raw != "" {
		require.NoError(t, json.Unmarshal([]byte(raw), &out), raw)
	}
	return code, out
}

func reasonOf(t *testing.T, raw string) string {
	t.Helper()
	var body struct {
		Reason string `json:"reason"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &body), raw)
	return body.Reason
}

type settingJSON struct {
	Key    string `json:"key"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	Config []struct {
		Key          string `json:"key"`
		Label        string `json:"label"`
		Type         string `json:"type"`
		Value        string `json:"value"`
		DefaultValue string `json:"defaultValue"`
		Required     bool   `json:"required"`
	} `json:"config"`
}

// values flattens settings to path → value, and path → type.
func values(settings []settingJSON) (map[string]string, map[string]string) {
	vals, types := map[string]string{}, map[string]string{}
	for _, s := range settings {
		for _, c := range s.Config {
			vals[s.Key+"."+c.Key] = c.Value
			types[s.Key+"."+c.Key] = c.Type
		}
	}
	return vals, types
}

// storedSetting reads a value straight from the database, as stored.
func (f *sysFixture) storedSetting(t *testing.T, path string) string {
	t.Helper()
	var doc struct {
		Settings []struct {
			Key    string `bson:"key"`
			Config []struct {
				Key   string `bson:"key"`
				Value string `bson:"value"`
			} `bson:"config"`
		} `bson:"settings"`
	}
	require.NoError(t, f.db.Collection("system").FindOne(context.Background(), bson.M{"_id": "settings"}).Decode(&doc))
	key, cfg, _ := strings.Cut(path, ".")
	for _, s := range doc.Settings {
		for _, c := range s.Config {
			if s.Key == key && c.Key == cfg {
				return c.Value
			}
		}
	}
	require.FailNow(t, "no stored setting "+path)
	return ""
}

func (f *sysFixture) open(t *testing.T, sealed string) string {
	t.Helper()
	box, err := secrets.FromString(f.key)
	require.NoError(t, err)
	plain, err := box.Open(sealed)
	require.NoError(t, err, "stored value %q is sealed with the configured key", sealed)
	return plain
}

func TestSettingsSeededReadAndChanged(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	f.start(t, identity.Config{})

	code, settings := sysCall[[]settingJSON](t, f, sysAdmin, http.MethodGet, "/api/v2/settings", "")
	require.Equal(t, http.StatusOK, code)
	var keys []string
	for _, s := range settings {
		keys = append(keys, s.Key)
	}
	assert.Equal(t, []string{"features", "quotas", "task", "runs", "actions", "events", "chat", "codehost", "platform"}, keys)
	vals, types := values(settings)
	for path, want := range map[string]string{
		"quotas.maxWorkflowCount": "100", "quotas.maxWorkflowRunMonthly": "100000",
		"quotas.maxWorkflowStorage": "25", "quotas.maxWorkflowRunStorage": "2",
		"quotas.maxWorkflowRunDuration": "1440", "quotas.maxConcurrentRuns": "100",
		"task.default.timeout": "90", "runs.maxDepth": "10", "runs.maxTreeRuns": "1000", "actions.preventSelfApproval": "false", "events.sinks": "",
		"features.insights": "true", "features.enable.verified.tasks.edit": "false",
		"chat.signingSecret": "", "chat.botToken": "", "codehost.appId": "",
		"codehost.webhookSecret": "", "codehost.privateKey": "",
	} {
		assert.Equal(t, want, vals[path], path)
	}
	for _, path := range []string{"chat.signingSecret", "chat.botToken", "chat.clientSecret", "codehost.webhookSecret", "codehost.privateKey"} {
		assert.Equal(t, "secured", types[path], path)
	}

	// Values change; secrets are sealed at rest and never shown.
	code, raw := f.do(t, &sysAdmin, http.MethodPut, "/api/v2/settings", `[
		{"key": "chat", "config": [{"key": "signingSecret", "value": "sig-s3cret"}, {"key": "botToken", "value": "xoxb-t0ken"}]},
		{"key": "quotas", "config": [{"key": "maxWorkflowCount", "value": 50}]},
		{"key": "actions", "config": [{"key": "preventSelfApproval", "value": true}]},
		{"key": "events", "config": [{"key": "sinks", "value": ["https://sink.example/hook", "http://b.example"]}]},
		{"key": "codehost", "name": "ignored", "config": [{"key": "privateKey", "value": "-----BEGIN KEY-----\nabc\n-----END KEY-----"}]}
	]`)
	require.Equal(t, http.StatusOK, code, raw)
	for _, secret := range []string{"sig-s3cret", "xoxb-t0ken", "BEGIN KEY", "enc:v1"} {
		assert.NotContains(t, raw, secret)
	}
	var changed []settingJSON
	require.NoError(t, json.Unmarshal([]byte(raw), &changed))
	vals, _ = values(changed)
	assert.Equal(t, secrets.Mask, vals["chat.signingSecret"])
	assert.Equal(t, secrets.Mask, vals["chat.botToken"])
	assert.Equal(t, secrets.Mask, vals["codehost.privateKey"])
	assert.Equal(t, "", vals["codehost.webhookSecret"], "an unset secret reads empty")
	assert.Equal(t, "50", vals["quotas.maxWorkflowCount"])
	assert.Equal(t, "true", vals["actions.preventSelfApproval"])
	assert.Equal(t, "https://sink.example/hook,http://b.example", vals["events.sinks"])
	stored := f.storedSetting(t, "chat.signingSecret")
	assert.True(t, secrets.IsSealed(stored), stored)
	assert.Equal(t, "sig-s3cret", f.open(t, stored))

	// A secret sent back masked, or left out, is kept; "" clears it.
	code, raw = f.do(t, &sysAdmin, http.MethodPut, "/api/v2/settings",
		`[{"key": "chat", "config": [{"key": "signingSecret", "value": "********"}, {"key": "botToken", "value": ""}, {"key": "clientId"}]}]`)
	require.Equal(t, http.StatusOK, code, raw)
	assert.Equal(t, "sig-s3cret", f.open(t, f.storedSetting(t, "chat.signingSecret")))
	assert.Equal(t, "", f.storedSetting(t, "chat.botToken"))
	assert.Equal(t, "-----BEGIN KEY-----\nabc\n-----END KEY-----", f.open(t, f.storedSetting(t, "codehost.privateKey")))

	// GET never shows them either.
	code, raw = f.do(t, &sysAdmin, http.MethodGet, "/api/v2/settings", "")
	require.Equal(t, http.StatusOK, code)
	assert.NotContains(t, raw, "sig-s3cret")
	assert.NotContains(t, raw, "enc:v1")

	// A restart seeds again without touching what was changed.
	f.start(t, identity.Config{})
	code, settings = sysCall[[]settingJSON](t, f, sysAdmin, http.MethodGet, "/api/v2/settings", "")
	require.Equal(t, http.StatusOK, code)
	vals, _ = values(settings)
	assert.Equal(t, "50", vals["quotas.maxWorkflowCount"])
	assert.Equal(t, "true", vals["actions.preventSelfApproval"])
	assert.Equal(t, secrets.Mask, vals["chat.signingSecret"])
	assert.Equal(t, "sig-s3cret", f.open(t, f.storedSetting(t, "chat.signingSecret")))
}

func TestSettingsSeedRestoresMissingKeys(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	f.start(t, identity.Config{})
	code, raw := f.do(t, &sysAdmin, http.MethodPut, "/api/v2/settings",
		`[{"key": "quotas", "config": [{"key": "maxConcurrentRuns", "value": "7"}]}]`)
	require.Equal(t, http.StatusOK, code, raw)

	// As if an older release had stored the settings: no task setting, one quota missing.
	type configDoc struct {
		Key  string `bson:"key"`
		Rest bson.M `bson:",inline"`
	}
	type settingDoc struct {
		Key    string      `bson:"key"`
		Config []configDoc `bson:"config"`
		Rest   bson.M      `bson:",inline"`
	}
	var doc struct {
		Settings []settingDoc `bson:"settings"`
	}
	coll := f.db.Collection("system")
	require.NoError(t, coll.FindOne(context.Background(), bson.M{"_id": "settings"}).Decode(&doc))
	older := slices.DeleteFunc(doc.Settings, func(s settingDoc) bool { return s.Key == "task" })
	for i := range older {
		older[i].Config = slices.DeleteFunc(older[i].Config, func(c configDoc) bool { return c.Key == "maxWorkflowCount" })
	}
	_, err := coll.UpdateOne(context.Background(), bson.M{"_id": "settings"}, bson.M{"$set": bson.M{"settings": older}})
	require.NoError(t, err)

	f.start(t, identity.Config{})
	code, settings := sysCall[[]settingJSON](t, f, sysAdmin, http.MethodGet, "/api/v2/settings", "")
	require.Equal(t, http.StatusOK, code)
	vals, _ := values(settings)
	assert.Equal(t, "90", vals["task.default.timeout"])
	assert.Equal(t, "100", vals["quotas.maxWorkflowCount"])
	assert.Equal(t, "7", vals["quotas.maxConcurrentRuns"], "stored values are kept")
}

func TestSettingsChangesAreValidatedAllOrNothing(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	f.start(t, identity.Config{})
	tests := []struct {
		name      string
		give      string
		wantField string
	}{
		{"unknown setting", `[{"key": "nope", "config": [{"key": "x", "value": "1"}]}]`, "[0].key"},
		{"unknown config key", `[{"key": "quotas", "config": [{"key": "maxCats", "value": "1"}]}]`, "[0].config[0].key"},
		{"not a number", `[{"key": "task", "config": [{"key": "default.timeout", "value": "soon"}]}]`, "[0].config[0].value"},
		{"not a whole number", `[{"key": "quotas", "config": [{"key": "maxWorkflowCount", "value": 2.5}]}]`, "[0].config[0].value"},
		{"negative", `[{"key": "quotas", "config": [{"key": "maxWorkflowCount", "value": -1}]}]`, "[0].config[0].value"},
		{"required", `[{"key": "task", "config": [{"key": "default.timeout", "value": ""}]}]`, "[0].config[0].value"},
		{"no child runs at all", `[{"key": "runs", "config": [{"key": "maxDepth", "value": 0}]}]`, "[0].config[0].value"},
		{"no run below a run", `[{"key": "runs", "config": [{"key": "maxTreeRuns", "value": 0}]}]`, "[0].config[0].value"},
		{"not a boolean", `[{"key": "features", "config": [{"key": "insights", "value": "maybe"}]}]`, "[0].config[0].value"},
		{"not an option", `[{"key": "platform", "config": [{"key": "messageKind", "value": "shout"}]}]`, "[0].config[0].value"},
		{"not an http url", `[{"key": "events", "config": [{"key": "sinks", "value": "ftp://x.example"}]}]`, "[0].config[0].value"},
		{"an object", `[{"key": "events", "config": [{"key": "sinks", "value": {"a": 1}}]}]`, "[0].config[0].value"},
		{"one bad item spoils the rest", `[{"key": "quotas", "config": [{"key": "maxWorkflowCount", "value": 5}]},
			{"key": "task", "config": [{"key": "default.timeout", "value": "x"}]}]`, "[1].config[0].value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, raw := f.do(t, &sysAdmin, http.MethodPut, "/api/v2/settings", tt.give)
			require.Equal(t, http.StatusBadRequest, code, raw)
			var body struct {
				Reason string `json:"reason"`
				Errors []struct {
					Field string `json:"field"`
				} `json:"errors"`
			}
			require.NoError(t, json.Unmarshal([]byte(raw), &body))
			assert.Equal(t, "REQUEST_INVALID", body.Reason)
			require.NotEmpty(t, body.Errors, raw)
			assert.Equal(t, tt.wantField, body.Errors[0].Field)
		})
	}
	_, settings := sysCall[[]settingJSON](t, f, sysAdmin, http.MethodGet, "/api/v2/settings", "")
	vals, _ := values(settings)
	assert.Equal(t, "100", vals["quotas.maxWorkflowCount"], "nothing of a refused change is applied")
}

func TestSettingsNeedSystemPermissions(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	f.start(t, identity.Config{})
	reader := auth.Principal{Type: auth.TypeGlobal, ID: "64b0000000000000000000bb", TokenID: "64b0000000000000000000bb",
		Permissions: []string{"system/read"}}
	change := `[{"key": "task", "config": [{"key": "default.timeout", "value": "30"}]}]`
	tests := []struct {
		name     string
		who      auth.Principal
		method   string
		body     string
		wantCode int
	}{
		{"admin reads", sysAdmin, http.MethodGet, "", http.StatusOK},
		{"operator reads", sysOperator, http.MethodGet, "", http.StatusOK},
		{"global token with system/read reads", reader, http.MethodGet, "", http.StatusOK},
		{"user may not read", sysUser, http.MethodGet, "", http.StatusForbidden},
		{"team token may not read", sysTeamToken, http.MethodGet, "", http.StatusForbidden},
		{"user may not write", sysUser, http.MethodPut, change, http.StatusForbidden},
		{"team token may not write", sysTeamToken, http.MethodPut, change, http.StatusForbidden},
		{"system/read does not write", reader, http.MethodPut, change, http.StatusForbidden},
		{"admin writes", sysAdmin, http.MethodPut, change, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, raw := f.do(t, &tt.who, tt.method, "/api/v2/settings", tt.body)
			require.Equal(t, tt.wantCode, code, raw)
			if code == http.StatusForbidden {
				assert.Equal(t, "PERMISSION_DENIED", reasonOf(t, raw))
			}
		})
	}
	anon := auth.Anonymous
	code, _ := f.do(t, &anon, http.MethodGet, "/api/v2/settings", "")
	assert.Equal(t, http.StatusUnauthorized, code)
}

type navJSON struct {
	Name       string    `json:"name"`
	Type       string    `json:"type"`
	Link       string    `json:"link"`
	ChildLinks []navJSON `json:"childLinks"`
}

func navNames(items []navJSON) []string {
	var out []string
	for _, it := range items {
		if it.Type == "divider" {
			out = append(out, "|")
			continue
		}
		out = append(out, it.Name)
	}
	return out
}

func childNames(items []navJSON, menu string) []string {
	for _, it := range items {
		if it.Name == menu {
			return navNames(it.ChildLinks)
		}
	}
	return nil
}

func TestFeaturesContextAndNavigation(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	f.start(t, identity.Config{})

	code, features := sysCall[struct {
		Features map[string]bool `json:"features"`
	}](t, f, sysTeamToken, http.MethodGet, "/api/v2/features", "")
	require.Equal(t, http.StatusOK, code)
	want := map[string]bool{
		"activity": true, "insights": true, "global.parameters": true, "team.parameters": true, "team.tasks": true,
		"team.management": true, "user.management": true, "workflow.quotas": true, "workflow.tokens": true,
		"workflow.triggers": true, "enable.verified.tasks.edit": false,
	}
	assert.Equal(t, want, features.Features)

	code, header := sysCall[struct {
		Platform        map[string]any  `json:"platform"`
		Features        map[string]bool `json:"features"`
		Navigation      []navJSON       `json:"navigation"`
		PlatformMessage map[string]any  `json:"platformMessage"`
	}](t, f, sysUser, http.MethodGet, "/api/v2/context", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "Baton", header.Platform["name"])
	assert.Equal(t, "Baton", header.Platform["platformName"])
	assert.Equal(t, host.Version, header.Platform["version"])
	assert.Equal(t, map[string]bool{"notifications.enabled": false, "support.enabled": false, "docs.enabled": true, "consent.enabled": false},
		header.Features)
	assert.Equal(t, []string{"Home"}, navNames(header.Navigation))
	assert.Nil(t, header.PlatformMessage)

	tests := []struct {
		name      string
		who       auth.Principal
		team      string
		wantNames []string
	}{
		{"member with its team", sysUser, "alpha", []string{"Home", "Workflows", "Activity", "Actions", "Schedules", "Insights", "Manage"}},
		{"member with another team", sysUser, "bravo", []string{"Home"}},
		{"member without a team", sysUser, "", []string{"Home"}},
		{"team token of the team", sysTeamToken, "alpha", []string{"Home", "Workflows", "Activity", "Actions", "Schedules", "Insights", "Manage"}},
		{"team token of another team", sysTeamToken, "bravo", []string{"Home"}},
		{"admin sees any team and administers", sysAdmin, "bravo",
			[]string{"Home", "Workflows", "Activity", "Actions", "Schedules", "Insights", "Manage", "|", "Administer"}},
		{"operator administers", sysOperator, "", []string{"Home", "|", "Administer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, nav := sysCall[[]navJSON](t, f, tt.who, http.MethodGet, "/api/v2/navigation?team="+tt.team, "")
			require.Equal(t, http.StatusOK, code)
			assert.Equal(t, tt.wantNames, navNames(nav))
		})
	}
	_, nav := sysCall[[]navJSON](t, f, sysAdmin, http.MethodGet, "/api/v2/navigation", "")
	assert.Equal(t, []string{"Teams", "Users", "Tasks", "Workflow templates", "Parameters", "Tokens", "Quotas", "Settings"},
		childNames(nav, "Administer"))

	// Turning features off takes their entries away; the context carries the message.
	code, raw := f.do(t, &sysAdmin, http.MethodPut, "/api/v2/settings", `[
		{"key": "features", "config": [{"key": "insights", "value": false}, {"key": "global.parameters", "value": "false"}]},
		{"key": "platform", "config": [{"key": "message", "value": "Maintenance at noon"}, {"key": "messageKind", "value": "warning"}]}]`)
	require.Equal(t, http.StatusOK, code, raw)
	_, features = sysCall[struct {
		Features map[string]bool `json:"features"`
	}](t, f, sysUser, http.MethodGet, "/api/v2/features", "")
	assert.False(t, features.Features["insights"])
	assert.False(t, features.Features["global.parameters"])
	_, nav = sysCall[[]navJSON](t, f, sysAdmin, http.MethodGet, "/api/v2/navigation?team=alpha", "")
	assert.NotContains(t, navNames(nav), "Insights")
	assert.NotContains(t, childNames(nav, "Administer"), "Parameters")
	_, header = sysCall[struct {
		Platform        map[string]any  `json:"platform"`
		Features        map[string]bool `json:"features"`
		Navigation      []navJSON       `json:"navigation"`
		PlatformMessage map[string]any  `json:"platformMessage"`
	}](t, f, sysAdmin, http.MethodGet, "/api/v2/context", "")
	assert.Equal(t, map[string]any{"kind": "warning", "message": "Maintenance at noon"}, header.PlatformMessage)
	assert.True(t, slices.Contains(navNames(header.Navigation), "Administer"))

	anon := auth.Anonymous
	for _, path := range []string{"/api/v2/features", "/api/v2/context", "/api/v2/navigation"} {
		code, _ := f.do(t, &anon, http.MethodGet, path, "")
		assert.Equal(t, http.StatusUnauthorized, code, path)
	}
}

package identity_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/identity"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var admin = auth.Principal{Type: auth.TypeGlobal, ID: "bootstrap", Roles: []string{"admin"}}

type fixture struct {
	app    *fiber.App
	signer *auth.Signer
	kafka  kafkax.Config
}

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, nil) }

// newFixtureWith lets a test complete the service's dependencies (peers found through a
// resolver) before it starts.
func newFixtureWith(t *testing.T, with func(*identity.Deps)) *fixture {
	t.Helper()
	return newFixtureOn(t, "", with)
}

// newFixtureOn is newFixtureWith on the store databaseURL picks (Config.DatabaseURL):
// "" is the test's MongoDB database.
func newFixtureOn(t *testing.T, databaseURL string, with func(*identity.Deps)) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	client, err := mongox.Connect(ctx, testkit.MongoURI(t))
	require.NoError(t, err)
	kcfg := kafkax.Config{Brokers: testkit.KafkaBrokers(t), TopicPrefix: testkit.TopicPrefix(t)}
	require.NoError(t, kafkax.EnsureTopics(ctx, kcfg, 1, events.TeamEvents))
	producer := kafkax.NewProducer(kcfg)
	signer, err := auth.NewSigner([]byte("identity-test-key-0123456789"))
	require.NoError(t, err)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	deps := identity.Deps{
		DB: client.Database(testkit.Database(t)), Publisher: producer, Signer: signer, Logger: logger,
	}
	if with != nil {
		with(&deps)
	}
	if databaseURL != "" {
		deps.DB = nil // the service's own file holds everything
	}
	svc, err := identity.New(ctx, identity.Config{SecretKey: key, DatabaseURL: databaseURL}, deps)
	require.NoError(t, err)
	app := httpx.NewApp(httpx.Config{Name: "identity", Logger: logger})
	svc.Routes(app)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = svc.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = producer.Close()
		_ = client.Disconnect(context.Background())
	})
	return &fixture{app: app, signer: signer, kafka: kcfg}
}

// call sends a request as the admin and decodes the JSON answer.
func (f *fixture) call(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Content-Type", "application/json")
	require.NoError(t, f.signer.SetHeaders(admin, req.Header.Set))
	resp, err := f.app.Test(req, -1)
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

func TestTeamsLifecycle(t *testing.T) {
	t.Parallel()
	teamsLifecycle(t, newFixture(t))
}

func teamsLifecycle(t *testing.T, f *fixture) {

	code, team := f.call(t, http.MethodPost, "/api/v2/team", `{"name":"Platform Team","labels":{"org":"infra"}}`)
	require.Equal(t, http.StatusCreated, code, team)
	assert.Equal(t, "platform-team", team["name"])
	assert.Equal(t, "Platform Team", team["displayName"])
	assert.Equal(t, "active", team["status"])
	assert.Equal(t, map[string]any{"org": "infra"}, team["labels"])
	_, err := time.Parse(time.RFC3339, team["creationDate"].(string))
	require.NoError(t, err)

	code, body := f.call(t, http.MethodPost, "/api/v2/team", `{"name":"platform team"}`)
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Equal(t, "TEAM_NON_UNIQUE_NAME", body["reason"])

	code, got := f.call(t, http.MethodGet, "/api/v2/team/platform-team", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, team["id"], got["id"])

	code, got = f.call(t, http.MethodPatch, "/api/v2/team/platform-team",
		`{"displayName":"Platform","status":"inactive","labels":{"org":null,"tier":"1"}}`)
	require.Equal(t, http.StatusOK, code, got)
	assert.Equal(t, "Platform", got["displayName"])
	assert.Equal(t, "inactive", got["status"])
	assert.Equal(t, map[string]any{"tier": "1"}, got["labels"])

	code, body = f.call(t, http.MethodPatch, "/api/v2/team/platform-team", `{"name":"other"}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, "TEAM_INVALID_REQ", body["reason"])
	// Label keys that would end a BSON field name or read as an operator are the caller's mistake.
	for _, labels := range []string{`{"a\u0000b":"1"}`, `{"$where":"1"}`, `{"$set":null}`} {
		code, body = f.call(t, http.MethodPatch, "/api/v2/team/platform-team", `{"labels":`+labels+`}`)
		assert.Equal(t, http.StatusBadRequest, code, labels)
		assert.Equal(t, "TEAM_INVALID_REQ", body["reason"], labels)
	}

	code, _ = f.call(t, http.MethodDelete, "/api/v2/team/platform-team", "")
	assert.Equal(t, http.StatusNoContent, code)
	code, body = f.call(t, http.MethodGet, "/api/v2/team/platform-team", "")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "TEAM_NOT_FOUND", body["reason"])
	code, _ = f.call(t, http.MethodDelete, "/api/v2/team/platform-team", "")
	assert.Equal(t, http.StatusNotFound, code)

	// The name is free again at once, for a new team with a new id.
	code, again := f.call(t, http.MethodPost, "/api/v2/team", `{"name":"platform-team"}`)
	require.Equal(t, http.StatusCreated, code)
	assert.NotEqual(t, team["id"], again["id"])

	// created, deleted, created: in order, on the team's key.
	got3 := consume(t, f.kafka, 3)
	assert.Equal(t, []string{events.TypeTeamCreated, events.TypeTeamDeleted, events.TypeTeamCreated},
		[]string{got3[0].Type(), got3[1].Type(), got3[2].Type()})
	deleted, err := events.Decode[events.TeamDeleted](got3[1])
	require.NoError(t, err)
	assert.Equal(t, events.TeamDeleted{ID: team["id"].(string), Name: "platform-team"}, deleted)
}

func consume(t *testing.T, cfg kafkax.Config, n int) []event.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var got []event.Event
	c := kafkax.NewConsumer(cfg, kafkax.ConsumerOptions{
		GroupID: cfg.TopicPrefix + "reader", Topic: events.TeamEvents,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Handler: func(_ context.Context, e event.Event) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, e)
			if len(got) == n {
				cancel()
			}
			return nil
		},
	})
	require.NoError(t, c.Run(ctx))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, n, "events before the deadline")
	return got
}

func TestTeamQueryAndValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, body := range []string{
		`{"name":"alpha","labels":{"env":"prod"}}`,
		`{"name":"bravo","labels":{"env":"dev"}}`,
		`{"name":"charlie","labels":{"env":"prod"},"status":"inactive"}`,
	} {
		code, out := f.call(t, http.MethodPost, "/api/v2/team", body)
		require.Equal(t, http.StatusCreated, code, out)
	}

	tests := []struct {
		name      string
		query     string
		wantCode  int
		wantNames []string
		wantTotal float64
	}{
		{"default order is name descending", "", 200, []string{"charlie", "bravo", "alpha"}, 3},
		{"ascending", "?order=asc", 200, []string{"alpha", "bravo", "charlie"}, 3},
		{"labels", "?labels=env%3Dprod&order=ASC", 200, []string{"alpha", "charlie"}, 2},
		{"statuses", "?statuses=active", 200, []string{"bravo", "alpha"}, 2},
		{"names", "?teams=alpha,zulu", 200, []string{"alpha"}, 1},
		{"page two of size two keeps the exact total", "?limit=2&page=1&order=asc", 200, []string{"charlie"}, 3},
		{"bad limit", "?limit=5000", 400, nil, 0},
		{"bad sort", "?sort=secret", 400, nil, 0},
		{"page past the bound", "?page=9223372036854775807", 400, nil, 0},
		{"NUL in a label key", "?labels=a%00b%3Dc", 400, nil, 0},
		{"label key as an operator", "?labels=%24where%3D1", 400, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := f.call(t, http.MethodGet, "/api/v2/team/query"+tt.query, "")
			require.Equal(t, tt.wantCode, code, out)
			if tt.wantCode != 200 {
				assert.Equal(t, "QUERY_INVALID_FILTERS", out["reason"])
				return
			}
			var names []string
			for _, c := range out["content"].([]any) {
				names = append(names, c.(map[string]any)["name"].(string))
			}
			assert.Equal(t, tt.wantNames, names)
			assert.Equal(t, tt.wantTotal, out["totalElements"])
		})
	}

	validate := []struct {
		give       string
		wantCode   int
		wantReason string
		wantName   string
	}{
		{`{"name":"Delta Force"}`, 200, "", "delta-force"},
		{`{"name":"alpha"}`, 422, "TEAM_NON_UNIQUE_NAME", ""},
		{`{"name":"query"}`, 422, "TEAM_RESERVED_NAME", ""},
		{`{"name":"!!"}`, 400, "TEAM_INVALID_REQ", ""},
		{`{"name":`, 400, "REQUEST_INVALID", ""},
	}
	for _, tt := range validate {
		t.Run("validate "+tt.give, func(t *testing.T) {
			code, out := f.call(t, http.MethodPost, "/api/v2/team/validate-name", tt.give)
			require.Equal(t, tt.wantCode, code, out)
			if tt.wantReason != "" {
				assert.Equal(t, tt.wantReason, out["reason"])
				return
			}
			assert.Equal(t, map[string]any{"name": tt.wantName, "valid": true}, out)
		})
	}
}

func TestRequestsWithoutAServiceCredentialAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req := httptest.NewRequest(http.MethodGet, "/api/v2/team/query", nil)
	req.Header.Set(auth.HeaderPrincipal, "eyJ0eXBlIjoiZ2xvYmFsIn0")
	req.Header.Set(auth.HeaderSignature, "00")
	resp, err := f.app.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

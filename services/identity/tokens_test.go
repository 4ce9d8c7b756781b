package identity_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/identity"
)

// tokenReply is one answer of the service, kept whole so tests can look for secrets in it.
type tokenReply struct {
	code   int
	header http.Header
	raw    string
	body   map[string]any
}

// tokenCall sends a request as p (none when p is nil) and decodes a JSON object answer.
func tokenCall(t *testing.T, f *fixture, p *auth.Principal, method, path, body string) tokenReply {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Content-Type", "application/json")
	if p != nil {
		require.NoError(t, f.signer.SetHeaders(*p, req.Header.Set))
	}
	resp, err := f.app.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := tokenReply{code: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(t, json.Unmarshal(raw, &out.body), string(raw))
	}
	return out
}

var gatewayService = auth.Principal{Type: auth.TypeService, ID: "gateway"}

// authenticate asks the internal endpoint, as the gateway does.
func authenticate(t *testing.T, f *fixture, secret string) tokenReply {
	t.Helper()
	body, err := json.Marshal(map[string]string{"token": secret})
	require.NoError(t, err)
	return tokenCall(t, f, &gatewayService, http.MethodPost, "/internal/v1/authenticate", string(body))
}

// mintToken creates a token as p and returns its id and secret.
func mintToken(t *testing.T, f *fixture, p auth.Principal, body string) (id, secret string) {
	t.Helper()
	r := tokenCall(t, f, &p, http.MethodPost, "/api/v2/token", body)
	require.Equal(t, http.StatusCreated, r.code, r.raw)
	return r.body["id"].(string), r.body["token"].(string)
}

func TestTokensLifecycle(t *testing.T) {
	t.Parallel()
	tokensLifecycle(t, newFixture(t))
}

func tokensLifecycle(t *testing.T, f *fixture) {
	for _, name := range []string{"infra", "ops"} {
		r := tokenCall(t, f, &admin, http.MethodPost, "/api/v2/team", fmt.Sprintf(`{"name":%q}`, name))
		require.Equal(t, http.StatusCreated, r.code, r.raw)
	}

	// Create: 201, the secret once, never cached on the way.
	r := tokenCall(t, f, &admin, http.MethodPost, "/api/v2/token",
		`{"type":"team","name":"ci","principal":"infra","description":"for CI","permissions":["**/**"]}`)
	require.Equal(t, http.StatusCreated, r.code, r.raw)
	id, secret := r.body["id"].(string), r.body["token"].(string)
	assert.Regexp(t, `^[0-9a-f]{24}$`, id)
	assert.Regexp(t, `^btt_[0-9A-Za-z]{43}$`, secret)
	assert.Equal(t, "team", r.body["type"])
	assert.NotContains(t, r.body, "expirationDate")
	assert.Equal(t, "/api/v2/token/"+id, r.header.Get("Location"))
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
	secrets := []string{secret}

	// The internal endpoint answers the principal.
	a := authenticate(t, f, secret)
	require.Equal(t, http.StatusOK, a.code, a.raw)
	var p auth.Principal
	require.NoError(t, json.Unmarshal([]byte(a.raw), &p))
	assert.Equal(t, auth.Principal{Type: "team", ID: "infra", Name: "ci", Team: "infra", TokenID: id, Permissions: []string{"**/**"}}, p)
	assert.Empty(t, a.header.Get("X-Baton-Token-Expires"))

	// The team token mints a narrower one; the expiry reaches the internal answer.
	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	r = tokenCall(t, f, &p, http.MethodPost, "/api/v2/token", fmt.Sprintf(
		`{"type":"workflow","principal":"infra/build","expirationDate":%q,"permissions":["workflowrun/write"]}`, exp.Format(time.RFC3339Nano)))
	require.Equal(t, http.StatusCreated, r.code, r.raw)
	wfID, wfSecret := r.body["id"].(string), r.body["token"].(string)
	secrets = append(secrets, wfSecret)
	assert.Equal(t, exp.Format("2006-01-02T15:04:05.000Z07:00"), r.body["expirationDate"])
	a = authenticate(t, f, wfSecret)
	require.Equal(t, http.StatusOK, a.code, a.raw)
	got, err := time.Parse(time.RFC3339Nano, a.header.Get("X-Baton-Token-Expires"))
	require.NoError(t, err)
	assert.True(t, exp.Equal(got))
	assert.Contains(t, a.raw, `"workflow":"build"`)

	// Epoch milliseconds are accepted for the expiry too.
	_, s := mintToken(t, f, admin, fmt.Sprintf(`{"type":"global","permissions":["insights/read"],"expirationDate":%d}`, exp.UnixMilli()))
	secrets = append(secrets, s)

	// The team token sees what it made and its team's tokens; an owner of ops sees none.
	r = tokenCall(t, f, &p, http.MethodGet, "/api/v2/token/query", "")
	require.Equal(t, http.StatusOK, r.code, r.raw)
	assert.EqualValues(t, 2, r.body["totalElements"])
	content := r.body["content"].([]any)
	first := content[0].(map[string]any)
	assert.Equal(t, id, first["id"], "oldest first")
	assert.Equal(t, "bootstrap", first["createdBy"])
	assert.Equal(t, true, first["valid"])
	assert.Equal(t, "infra", first["principal"])
	assert.Equal(t, "for CI", first["description"])
	assert.Contains(t, first, "lastUsed", "it authenticated")
	assert.Equal(t, id, content[1].(map[string]any)["createdBy"], "made by the team token")
	opsOwner := auth.Principal{Type: auth.TypeUser, ID: "65a1b2c3d4e5f60718293a4b", Teams: map[string]string{"ops": "owner"}}
	r = tokenCall(t, f, &opsOwner, http.MethodGet, "/api/v2/token/query", "")
	require.Equal(t, http.StatusOK, r.code, r.raw)
	assert.EqualValues(t, 0, r.body["totalElements"])
	r = tokenCall(t, f, &opsOwner, http.MethodDelete, "/api/v2/token/"+id, "")
	assert.Equal(t, http.StatusNotFound, r.code, r.raw)
	assert.Equal(t, "TOKEN_NOT_FOUND", r.body["reason"])

	// Searching as the admin: filters, sorting, paging.
	queries := []struct {
		query     string
		wantTotal int
		wantFirst string
	}{
		{"", 3, id},
		{"?types=workflow", 1, wfID},
		{"?types=team,workflow&sort=name&order=desc", 2, id},
		{"?principals=infra/build", 1, wfID},
		{"?types=robot", 0, ""},
		{"?limit=1&page=1", 3, wfID},
		{fmt.Sprintf("?fromDate=%d", time.Now().Add(time.Hour).UnixMilli()), 0, ""},
		{fmt.Sprintf("?toDate=%d", time.Now().Add(time.Hour).UnixMilli()), 3, id},
	}
	for _, q := range queries {
		r = tokenCall(t, f, &admin, http.MethodGet, "/api/v2/token/query"+q.query, "")
		require.Equal(t, http.StatusOK, r.code, "%s: %s", q.query, r.raw)
		assert.EqualValues(t, q.wantTotal, r.body["totalElements"], q.query)
		if q.wantFirst != "" {
			assert.Equal(t, q.wantFirst, r.body["content"].([]any)[0].(map[string]any)["id"], q.query)
		}
	}
	r = tokenCall(t, f, &admin, http.MethodGet, "/api/v2/token/query?sort=secret", "")
	assert.Equal(t, http.StatusBadRequest, r.code)
	assert.Equal(t, "QUERY_INVALID_FILTERS", r.body["reason"])

	// Revoke: 200 with the token, which no longer authenticates; again is the same.
	r = tokenCall(t, f, &admin, http.MethodDelete, "/api/v2/token/"+wfID, "")
	require.Equal(t, http.StatusOK, r.code, r.raw)
	assert.Equal(t, false, r.body["valid"])
	assert.Equal(t, wfID, r.body["id"])
	a = authenticate(t, f, wfSecret)
	assert.Equal(t, http.StatusUnauthorized, a.code)
	assert.Equal(t, "UNAUTHENTICATED", a.body["reason"])
	r = tokenCall(t, f, &admin, http.MethodDelete, "/api/v2/token/"+wfID, "")
	assert.Equal(t, http.StatusOK, r.code)
	r = tokenCall(t, f, &admin, http.MethodDelete, "/api/v2/token/65a1b2c3d4e5f60718293a4b", "")
	assert.Equal(t, http.StatusNotFound, r.code)

	// A deleted team's tokens stop working, and a new team of the same name does not
	// inherit them.
	r = tokenCall(t, f, &admin, http.MethodDelete, "/api/v2/team/infra", "")
	require.Equal(t, http.StatusNoContent, r.code, r.raw)
	assert.Equal(t, http.StatusUnauthorized, authenticate(t, f, secret).code)
	r = tokenCall(t, f, &admin, http.MethodPost, "/api/v2/team", `{"name":"infra"}`)
	require.Equal(t, http.StatusCreated, r.code, r.raw)
	assert.Equal(t, http.StatusUnauthorized, authenticate(t, f, secret).code)

	// Secrets appear in no answer but their own create response.
	for _, path := range []string{"/api/v2/token/query", "/api/v2/token/query?types=team"} {
		r = tokenCall(t, f, &admin, http.MethodGet, path, "")
		for _, s := range secrets {
			assert.NotContains(t, r.raw, s)
			assert.NotContains(t, r.raw, s[4:])
		}
	}
}

func TestTokenRequestsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := tokenCall(t, f, &admin, http.MethodPost, "/api/v2/team", `{"name":"infra"}`)
	require.Equal(t, http.StatusCreated, r.code, r.raw)
	reader := auth.Principal{Type: auth.TypeTeam, ID: "infra", Team: "infra", TokenID: "65a1b2c3d4e5f60718293a4c", Permissions: []string{"**/read", "token/write"}}
	tests := []struct {
		name       string
		caller     *auth.Principal
		body       string
		wantStatus int
		wantReason string
	}{
		{"session", &admin, `{"type":"session","permissions":["**/**"]}`, 400, "TOKEN_INVALID_SESSION_REQ"},
		{"unknown type", &admin, `{"type":"robot","permissions":["**/**"]}`, 400, "TOKEN_INVALID_REQ"},
		{"unknown permission", &admin, `{"type":"global","permissions":["workflow/fly"]}`, 400, "TOKEN_INVALID_REQ"},
		{"permissions not a list", &admin, `{"type":"global","permissions":"**/**"}`, 400, "TOKEN_INVALID_REQ"},
		{"expiry not a date", &admin, `{"type":"global","permissions":["**/read"],"expirationDate":"soon"}`, 400, "TOKEN_INVALID_REQ"},
		{"expiry in the past", &admin, `{"type":"global","permissions":["**/read"],"expirationDate":"2001-01-01T00:00:00Z"}`, 400, "TOKEN_INVALID_REQ"},
		{"no body", &admin, ``, 400, "REQUEST_INVALID"},
		{"unknown team", &admin, `{"type":"team","principal":"ghost","permissions":["**/read"]}`, 404, "TEAM_NOT_FOUND"},
		{"more than the caller holds", &reader, `{"type":"team","principal":"infra","permissions":["workflow/write"]}`, 403, "TOKEN_INVALID_PERMISSION"},
		{"another team", &reader, `{"type":"team","principal":"ops","permissions":["workflow/read"]}`, 403, "PERMISSION_DENIED"},
		{"no principal", nil, `{"type":"global","permissions":["**/read"]}`, 401, "UNAUTHENTICATED"},
		{"anonymous", &auth.Anonymous, `{"type":"global","permissions":["**/read"]}`, 401, "UNAUTHENTICATED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tokenCall(t, f, tt.caller, http.MethodPost, "/api/v2/token", tt.body)
			assert.Equal(t, tt.wantStatus, r.code, r.raw)
			assert.Equal(t, tt.wantReason, r.body["reason"], r.raw)
		})
	}
	r = tokenCall(t, f, &admin, http.MethodGet, "/api/v2/token/query", "")
	assert.EqualValues(t, 0, r.body["totalElements"], "nothing was stored")
}

func TestInternalAuthenticateEndpoint(t *testing.T) {
	t.Parallel()
	internalAuthenticate(t, newFixture(t))
}

func internalAuthenticate(t *testing.T, f *fixture) {
	_, secret := mintToken(t, f, admin, `{"type":"global","permissions":["**/read"]}`)
	body := fmt.Sprintf(`{"token":%q}`, secret)
	user := auth.Principal{Type: auth.TypeUser, ID: "65a1b2c3d4e5f60718293a4b", Roles: []string{"admin"}}
	tests := []struct {
		name       string
		caller     *auth.Principal
		body       string
		wantStatus int
		wantReason string
	}{
		{"the gateway", &gatewayService, body, 200, ""},
		{"another service", &auth.Principal{Type: auth.TypeService, ID: "runs"}, body, 200, ""},
		{"an admin is not a service", &user, body, 403, "PERMISSION_DENIED"},
		{"a global token is not a service", &auth.Principal{Type: auth.TypeGlobal, ID: "x", Permissions: []string{"**/**"}}, body, 403, "PERMISSION_DENIED"},
		{"anonymous", &auth.Anonymous, body, 401, "UNAUTHENTICATED"},
		{"unsigned", nil, body, 401, "UNAUTHENTICATED"},
		{"malformed token", &gatewayService, `{"token":"btg_short"}`, 401, "UNAUTHENTICATED"},
		{"unknown token", &gatewayService, `{"token":"btg_` + strings.Repeat("z", 43) + `"}`, 401, "UNAUTHENTICATED"},
		{"no token", &gatewayService, `{}`, 401, "UNAUTHENTICATED"},
		{"not json", &gatewayService, `token`, 400, "REQUEST_INVALID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tokenCall(t, f, tt.caller, http.MethodPost, "/internal/v1/authenticate", tt.body)
			require.Equal(t, tt.wantStatus, r.code, r.raw)
			if tt.wantStatus == 200 {
				assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
				assert.Contains(t, r.raw, `"type":"global"`)
				assert.NotContains(t, r.raw, secret)
				return
			}
			assert.Equal(t, tt.wantReason, r.body["reason"])
			assert.NotContains(t, r.raw, secret)
		})
	}
	// Internal endpoints are not part of the public API.
	r := tokenCall(t, f, &admin, http.MethodPost, "/api/v2/internal/v1/authenticate", body)
	assert.Equal(t, http.StatusNotFound, r.code)
}

func TestUserTokens(t *testing.T) {
	t.Parallel()
	userTokens(t, newFixture(t))
}

func userTokens(t *testing.T, f *fixture) {
	r := tokenCall(t, f, &admin, http.MethodPost, "/api/v2/team", `{"name":"infra"}`)
	require.Equal(t, http.StatusCreated, r.code, r.raw)
	// A first sign-in (a session principal with a verified email) registers the user.
	session := auth.Principal{Type: auth.TypeSession, Email: "ada@example.com", Name: "Ada"}
	r = tokenCall(t, f, &session, http.MethodGet, "/api/v2/profile", "")
	require.Equal(t, http.StatusOK, r.code, r.raw)
	userID := r.body["id"].(string)
	r = tokenCall(t, f, &admin, http.MethodPatch, "/api/v2/team/infra", fmt.Sprintf(`{"members":[{"id":%q,"role":"editor"}]}`, userID))
	require.Equal(t, http.StatusOK, r.code, r.raw)
	ada := auth.Principal{Type: auth.TypeUser, ID: userID, Email: "ada@example.com", Teams: map[string]string{"infra": "editor"}}

	// Ada makes a token for herself, narrowed to reading; it acts as her, with her roles as
	// they are when it is used.
	id, secret := mintToken(t, f, ada, `{"type":"user","permissions":["**/read"]}`)
	a := authenticate(t, f, secret)
	require.Equal(t, http.StatusOK, a.code, a.raw)
	var p auth.Principal
	require.NoError(t, json.Unmarshal([]byte(a.raw), &p))
	assert.Equal(t, "user", p.Type)
	assert.Equal(t, userID, p.ID)
	assert.Equal(t, id, p.TokenID)
	assert.Equal(t, map[string]string{"infra": "editor"}, p.Teams)
	assert.Equal(t, []string{"**/read"}, p.Permissions)
	assert.True(t, p.Can(auth.TeamScope("infra"), "workflow", "read"))
	assert.False(t, p.Can(auth.TeamScope("infra"), "workflow", "write"), "narrowed")

	// Through that token she cannot make a wider one, nor one for someone else.
	r = tokenCall(t, f, &p, http.MethodPost, "/api/v2/token", `{"type":"user","permissions":["**/write"]}`)
	assert.Equal(t, http.StatusForbidden, r.code, r.raw)
	r = tokenCall(t, f, &ada, http.MethodPost, "/api/v2/token", `{"type":"user","principal":"65a1b2c3d4e5f60718293a4b"}`)
	assert.Equal(t, http.StatusForbidden, r.code, r.raw)
	assert.Equal(t, "TOKEN_INVALID_PERMISSION", r.body["reason"])

	// She sees it; deleting her revokes it.
	r = tokenCall(t, f, &ada, http.MethodGet, "/api/v2/token/query?types=user", "")
	require.Equal(t, http.StatusOK, r.code, r.raw)
	assert.EqualValues(t, 1, r.body["totalElements"])
	r = tokenCall(t, f, &admin, http.MethodDelete, "/api/v2/user/"+userID, "")
	require.Less(t, r.code, 300, r.raw)
	assert.Equal(t, http.StatusUnauthorized, authenticate(t, f, secret).code)
}

// BenchmarkInternalAuthenticate measures identity's side of an uncached authentication:
// the internal endpoint, one lookup of the token by its hash on the test database
// (FerretDB unless BATON_TEST_INFRA=containers), and the principal's JSON.
func BenchmarkInternalAuthenticate(b *testing.B) {
	ctx := context.Background()
	client, err := mongox.Connect(ctx, testkit.MongoURI(b))
	require.NoError(b, err)
	b.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	signer, err := auth.NewSigner([]byte("identity-test-key-0123456789"))
	require.NoError(b, err)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, err := identity.New(ctx, identity.Config{}, identity.Deps{DB: client.Database(testkit.Database(b)), Signer: signer, Logger: logger})
	require.NoError(b, err)
	app := httpx.NewApp(httpx.Config{Name: "identity", Logger: logger, NoTracing: true})
	svc.Routes(app)

	send := func(p auth.Principal, method, path, body string) (int, []byte) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		require.NoError(b, signer.SetHeaders(p, req.Header.Set))
		resp, err := app.Test(req, -1)
		require.NoError(b, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(b, err)
		return resp.StatusCode, raw
	}
	code, raw := send(admin, http.MethodPost, "/api/v2/token", `{"type":"global","permissions":["**/read"]}`)
	require.Equal(b, http.StatusCreated, code, string(raw))
	var created struct{ Token string }
	require.NoError(b, json.Unmarshal(raw, &created))
	body := fmt.Sprintf(`{"token":%q}`, created.Token)
	// Some other tokens, so the lookup is not in a collection of one.
	for range 200 {
		code, raw := send(admin, http.MethodPost, "/api/v2/token", `{"type":"global","permissions":["**/read"]}`)
		require.Equal(b, http.StatusCreated, code, string(raw))
	}

	// A person's team token, made with another of their tokens: authenticating it also
	// checks its parent (one lookup) and the person (their user and teams).
	code, raw = send(auth.Principal{Type: auth.TypeSession, Email: "bench@example.com"}, http.MethodGet, "/api/v2/profile", "")
	require.Equal(b, http.StatusOK, code, string(raw))
	var profile struct{ ID string }
	require.NoError(b, json.Unmarshal(raw, &profile))
	person := auth.Principal{Type: auth.TypeUser, ID: profile.ID}
	code, raw = send(person, http.MethodPost, "/api/v2/team", `{"name":"bench"}`)
	require.Equal(b, http.StatusCreated, code, string(raw))
	person.Teams = map[string]string{"bench": auth.RoleOwner}
	mintAs := func(p auth.Principal, req string) string {
		code, raw := send(p, http.MethodPost, "/api/v2/token", req)
		require.Equal(b, http.StatusCreated, code, string(raw))
		var c struct{ Token string }
		require.NoError(b, json.Unmarshal(raw, &c))
		return c.Token
	}
	parentSecret := mintAs(person, `{"type":"team","principal":"bench","permissions":["**/**"]}`)
	code, raw = send(gatewayService, http.MethodPost, "/internal/v1/authenticate", fmt.Sprintf(`{"token":%q}`, parentSecret))
	require.Equal(b, http.StatusOK, code, string(raw))
	var parent auth.Principal
	require.NoError(b, json.Unmarshal(raw, &parent))
	childBody := fmt.Sprintf(`{"token":%q}`, mintAs(parent, `{"type":"team","principal":"bench","permissions":["workflow/read"]}`))

	for _, bc := range []struct{ name, body string }{
		{"global token of the bootstrap admin", body},
		{"team token of a person, made with a token", childBody},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if code, raw := send(gatewayService, http.MethodPost, "/internal/v1/authenticate", bc.body); code != http.StatusOK {
					b.Fatalf("%d: %s", code, raw)
				}
			}
		})
	}
}

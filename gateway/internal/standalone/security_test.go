package standalone_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/contract"
	"github.com/baton-flow/baton/gateway/internal/routes"
)

// reply is one answer of the gateway, kept whole so secrets can be looked for in it.
type reply struct {
	code   int
	header http.Header
	raw    string
	body   map[string]any
}

// recorder sends requests through the gateway and keeps every answer but the token
// create responses, which alone may show a secret.
type recorder struct {
	b       *baton
	client  *http.Client
	mu      sync.Mutex
	answers []string
}

func (r *recorder) send(t *testing.T, method, path, token, body string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, r.b.url+path, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := contract.Client(t, r.client).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var raw []byte
	// A stream granted lasts as long as what it follows: its head is the answer.
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw, err = io.ReadAll(resp.Body)
		require.NoError(t, err)
	}
	out := reply{code: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(t, json.Unmarshal(raw, &out.body), string(raw))
	}
	if !(method == http.MethodPost && path == "/api/v2/token") {
		var h strings.Builder
		for k, vs := range resp.Header {
			fmt.Fprintf(&h, "%s: %s\n", k, strings.Join(vs, ", "))
		}
		r.mu.Lock()
		r.answers = append(r.answers, h.String()+out.raw)
		r.mu.Unlock()
	}
	return out
}

// mint creates a token as the admin and returns its id and secret.
func (r *recorder) mint(t *testing.T, body string) (id, secret string) {
	t.Helper()
	rep := r.send(t, http.MethodPost, "/api/v2/token", r.b.token, body)
	require.Equal(t, http.StatusCreated, rep.code, rep.raw)
	return rep.body["id"].(string), rep.body["token"].(string)
}

var paramRE = regexp.MustCompile(`\{[^}]+\}`)

// concrete fills a route's parameters: the team under test, a workflow name, and ids.
func concrete(pattern, team string) string {
	return paramRE.ReplaceAllStringFunc(pattern, func(p string) string {
		switch p {
		case "{team}":
			return team
		case "{name}":
			return "build"
		}
		return "65a1b2c3d4e5f60718293a4b"
	})
}

func bodyFor(method string) string {
	if method == http.MethodGet || method == http.MethodDelete {
		return ""
	}
	return "{}"
}

// TestIntegrationSecurity walks every endpoint of the routing table (the seed's and the
// compatibility paths) through the gateway of a standalone Baton with credentials that
// must not work, or must not work there, and checks secrets never leak.
func TestIntegrationSecurity(t *testing.T) {
	t.Parallel()
	const ttl = 500 * time.Millisecond
	b := start(t, map[string]string{
		"BATON_DATA_DIR":       t.TempDir(),
		"BATON_GATEWAY_ADDR":   "127.0.0.1:0",
		"BATON_LOG_LEVEL":      "error",
		"BATON_RATE_LIMIT":     "0",
		"BATON_AUTH_CACHE_TTL": ttl.String(),
		"BATON_SECRET_KEY":     strings.Repeat("ab", 32),
		"BATON_AUTO_ACTIVATE":  "true",
	})
	rec := &recorder{b: b, client: &http.Client{Timeout: 30 * time.Second}}
	t.Cleanup(rec.client.CloseIdleConnections)

	for _, team := range []string{"sec-a", "sec-b"} {
		rep := rec.send(t, http.MethodPost, "/api/v2/team", b.token, fmt.Sprintf(`{"name":%q}`, team))
		require.Equal(t, http.StatusCreated, rep.code, rep.raw)
	}
	_, ownerA := rec.mint(t, `{"type":"team","name":"owner","principal":"sec-a","permissions":["**/**"]}`)
	_, readerA := rec.mint(t, `{"type":"team","name":"reader","principal":"sec-a","permissions":["**/read"]}`)
	_, ownerB := rec.mint(t, `{"type":"team","name":"owner","principal":"sec-b","permissions":["**/**"]}`)
	revokedID, revoked := rec.mint(t, `{"type":"team","principal":"sec-a","permissions":["**/**"]}`)
	// The expiry must still be ahead when identity gets the request, which a loaded machine
	// can delay by seconds: a date already past is refused, and tried again further ahead.
	var expired string
	expiresIn := 1500 * time.Millisecond
	for {
		rep := rec.send(t, http.MethodPost, "/api/v2/token", b.token, fmt.Sprintf(`{"type":"team","principal":"sec-a","permissions":["**/read"],"expirationDate":%q}`,
			time.Now().Add(expiresIn).UTC().Format(time.RFC3339Nano)))
		if rep.code == http.StatusCreated {
			expired = rep.body["token"].(string)
			break
		}
		require.Equal(t, http.StatusBadRequest, rep.code, rep.raw)
		require.Contains(t, rep.raw, "must be in the future")
		require.Less(t, expiresIn, time.Minute, "identity kept refusing a date ahead of it")
		expiresIn *= 2
	}
	secrets := []string{b.token, ownerA, readerA, ownerB, revoked, expired}

	// A person who reads in sec-a, through a read-only token acting as them: invited by
	// email, then given the token by the admin.
	rep := rec.send(t, http.MethodPatch, "/api/v2/team/sec-a", b.token, `{"members":[{"email":"rita@example.com","role":"reader"}]}`)
	require.Equal(t, http.StatusOK, rep.code, rep.raw)
	var ritaID string
	for _, m := range rep.body["members"].([]any) {
		if m := m.(map[string]any); m["email"] == "rita@example.com" {
			ritaID = m["id"].(string)
		}
	}
	require.NotEmpty(t, ritaID, rep.raw)
	_, readerUser := rec.mint(t, fmt.Sprintf(`{"type":"user","principal":%q,"permissions":["**/read"]}`, ritaID))
	secrets = append(secrets, readerUser)

	tokName := func(tok string) string {
		return map[string]string{readerA: "team reader token", readerUser: "user reader token"}[tok]
	}

	const probe = "/api/v2/team/sec-a"
	for _, tok := range []string{ownerA, readerA, revoked, readerUser} {
		rep := rec.send(t, http.MethodGet, probe, tok, "")
		require.Equal(t, http.StatusOK, rep.code, rep.raw)
	}

	// Revoked: it stops working within the cache TTL.
	rep = rec.send(t, http.MethodDelete, "/api/v2/token/"+revokedID, b.token, "")
	require.Equal(t, http.StatusOK, rep.code, rep.raw)
	revokedAt := time.Now()
	require.Eventually(t, func() bool {
		return rec.send(t, http.MethodGet, probe, revoked, "").code == http.StatusUnauthorized
	}, ttl+5*time.Second, 10*time.Millisecond)
	t.Logf("revoked token refused %v after its revocation (cache TTL %v)", time.Since(revokedAt).Round(time.Millisecond), ttl)
	// Expired: refused from its expiry on, whatever the cache holds.
	require.Eventually(t, func() bool {
		return rec.send(t, http.MethodGet, probe, expired, "").code == http.StatusUnauthorized
	}, expiresIn+30*time.Second, 10*time.Millisecond)

	unauthenticated := func(t *testing.T, rep reply, path string) {
		t.Helper()
		require.Equal(t, http.StatusUnauthorized, rep.code, rep.raw)
		assert.Equal(t, "UNAUTHENTICATED", rep.body["reason"])
		assert.EqualValues(t, 1007, rep.body["code"])
		assert.Equal(t, strings.Split(path, "?")[0], rep.body["path"])
	}
	forbidden := func(t *testing.T, rep reply) {
		t.Helper()
		require.Equal(t, http.StatusForbidden, rep.code, rep.raw)
		assert.Equal(t, "PERMISSION_DENIED", rep.body["reason"])
		assert.EqualValues(t, 403, rep.body["status"])
	}

	table := routes.Declared()
	require.Len(t, table, 115)
	tested := map[string]int{}
	for _, r := range table {
		path := concrete(r.Pattern, "sec-a")
		body := bodyFor(r.Method)
		t.Run(r.Method+" "+r.Pattern, func(t *testing.T) {
			rep := rec.send(t, r.Method, path, "", body)
			switch {
			case r.Open:
				assert.NotEqual(t, "UNAUTHENTICATED", rep.body["reason"], "open routes need no credentials: %s", rep.raw)
			default:
				unauthenticated(t, rep, path)
			}
			tested["none"]++

			for name, tok := range map[string]string{
				"malformed": "btt_this-is-not-a-token", "expired": expired, "revoked": revoked,
			} {
				unauthenticated(t, rec.send(t, r.Method, path, tok, body), path)
				tested[name]++
			}

			if strings.Contains(r.Pattern, "{team}") {
				require.Equal(t, routes.Check, r.Access, "team routes are checked at the gateway")
				forbidden(t, rec.send(t, r.Method, path, ownerB, body))
				tested["other team"]++
				if r.Method == http.MethodGet {
					// The team's own token gets through to the service.
					rep := rec.send(t, r.Method, path, ownerA, body)
					assert.NotContains(t, []int{401, 403}, rep.code, rep.raw)
				}
			}

			if r.Method != http.MethodGet && !r.Open && r.Access != routes.Authenticated {
				for _, tok := range []string{readerA, readerUser} {
					rep := rec.send(t, r.Method, path, tok, body)
					if r.Access == routes.Check && r.Action == "read" {
						// Validating a task or leaving a team needs membership at the gateway;
						// the service judges the rest.
						assert.NotEqual(t, http.StatusUnauthorized, rep.code, rep.raw)
						continue
					}
					if r.Access == routes.Check {
						forbidden(t, rep)
					} else {
						// The service decides; a reader's write never succeeds.
						assert.GreaterOrEqual(t, rep.code, 400, "%s: %s", tokName(tok), rep.raw)
						assert.NotEqual(t, http.StatusUnauthorized, rep.code, rep.raw)
					}
					tested["reader write"]++
				}
			}
		})
	}
	t.Logf("requests per case: %v", tested)

	// The tokens listed, as the admin sees them, show no secret either.
	rep = rec.send(t, http.MethodGet, "/api/v2/token/query", b.token, "")
	require.Equal(t, http.StatusOK, rep.code, rep.raw)
	assert.EqualValues(t, 6, rep.body["totalElements"])
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, s := range secrets {
		sum := sha256.Sum256([]byte(s))
		for _, a := range rec.answers {
			require.NotContains(t, a, s, "a secret in an answer")
			require.NotContains(t, a, hex.EncodeToString(sum[:]), "a secret's hash in an answer")
		}
	}
}

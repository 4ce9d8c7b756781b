package authn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/testkit"
)

// answer is how the fake identity answers one token.
type answer struct {
	status    int
	principal auth.Principal
	expires   string // X-Baton-Token-Expires, when set
	body      string // raw body instead of principal, when set
}

// fakeIdentity is identity's internal endpoint on loopback, answering from a table. It
// checks that every question carries the gateway's signed service principal.
type fakeIdentity struct {
	t       testing.TB
	url     string
	signer  *auth.Signer
	mu      sync.Mutex
	answers map[string]answer
	calls   atomic.Int64
	// hold, when set, makes every question wait until it is closed.
	hold chan struct{}
}

func newFakeIdentity(t testing.TB, signer *auth.Signer) *fakeIdentity {
	f := &fakeIdentity{t: t, signer: signer, answers: map[string]answer{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *fakeIdentity) set(token string, a answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[token] = a
}

func (f *fakeIdentity) serve(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	if r.Method != http.MethodPost || r.URL.Path != identityapi.AuthenticatePath {
		http.Error(w, "wrong endpoint", http.StatusNotFound)
		return
	}
	p, err := f.signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
	if err != nil || p.Type != auth.TypeService || p.ID != "gateway" {
		http.Error(w, "not the gateway", http.StatusForbidden)
		return
	}
	var body struct{ Token, Email string }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	if f.hold != nil {
		<-f.hold
	}
	// Sign-ins are looked up as "email:<address>", tokens as themselves.
	question := body.Token
	if body.Email != "" {
		question = "email:" + body.Email
	}
	f.mu.Lock()
	a, ok := f.answers[question]
	f.mu.Unlock()
	if !ok {
		a = answer{status: http.StatusUnauthorized, body: `{"reason":"UNAUTHENTICATED"}`}
	}
	if a.expires != "" {
		w.Header().Set(identityapi.HeaderTokenExpires, a.expires)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	if a.body != "" {
		_, _ = io.WriteString(w, a.body)
		return
	}
	_ = json.NewEncoder(w).Encode(a.principal)
}

// clock is a settable clock for cache lifetimes.
type clock struct{ now atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.now.Store(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *clock) Now() time.Time            { return time.Unix(0, c.now.Load()).UTC() }
func (c *clock) advance(d time.Duration)   { c.now.Add(int64(d)) }
func (c *clock) at(d time.Duration) string { return c.Now().Add(d).Format(time.RFC3339Nano) }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testSigner(t testing.TB) *auth.Signer { return mustSigner(t, "a-service-key-for-authn-tests") }

func resolverFor(urls ...string) *registry.Static {
	return registry.NewStatic(map[string][]string{identityapi.Service: urls})
}

var teamPrincipal = auth.Principal{Type: auth.TypeTeam, ID: "infra", Team: "infra", Permissions: []string{"**/read"}, TokenID: "65a1b2c3d4e5f60718293a4b"}

func newIdentity(t testing.TB, cfg IdentityConfig) *Identity {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet()
	}
	a, err := NewIdentity(cfg)
	require.NoError(t, err)
	return a
}

func TestIdentityCaching(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// answer is identity's first answer; later is its answer after the change (a
		// revocation, say).
		answer answer
		later  answer
		// advance is how far the clock moves before the second request.
		advance    time.Duration
		wantFirst  bool // the first request authenticates
		wantSecond bool
		wantCalls  int64
	}{
		{name: "accepted, then cached", answer: answer{status: 200, principal: teamPrincipal},
			later: answer{status: 401}, advance: 4 * time.Second, wantFirst: true, wantSecond: true, wantCalls: 1},
		{name: "revocation shows after the TTL", answer: answer{status: 200, principal: teamPrincipal},
			later: answer{status: 401}, advance: 5 * time.Second, wantFirst: true, wantSecond: false, wantCalls: 2},
		{name: "refused, then cached briefly", answer: answer{status: 401},
			later: answer{status: 200, principal: teamPrincipal}, advance: 900 * time.Millisecond, wantCalls: 1},
		{name: "refusal forgotten after the negative TTL", answer: answer{status: 401},
			later: answer{status: 200, principal: teamPrincipal}, advance: time.Second, wantSecond: true, wantCalls: 2},
		{name: "token expiry caps the lifetime", answer: answer{status: 200, principal: teamPrincipal, expires: "+1s"},
			later: answer{status: 401}, advance: time.Second, wantFirst: true, wantSecond: false, wantCalls: 2},
		{name: "token expiry later than the TTL", answer: answer{status: 200, principal: teamPrincipal, expires: "+1h"},
			later: answer{status: 401}, advance: 4 * time.Second, wantFirst: true, wantSecond: true, wantCalls: 1},
		{name: "already expired", answer: answer{status: 200, principal: teamPrincipal, expires: "-1s"},
			later: answer{status: 200, principal: teamPrincipal}, advance: 0, wantFirst: false, wantSecond: false, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			signer := testSigner(t)
			clk := newClock()
			id := newFakeIdentity(t, signer)
			const token = "btt_secret"
			first := tt.answer
			if first.expires != "" {
				d, err := time.ParseDuration(first.expires)
				require.NoError(t, err)
				first.expires = clk.at(d)
			}
			id.set(token, first)
			a := newIdentity(t, IdentityConfig{Resolver: resolverFor(id.url), Signer: signer, Now: clk.Now})

			p, err := a.Authenticate(context.Background(), token)
			assertAuth(t, tt.wantFirst, p, err)
			id.set(token, tt.later)
			clk.advance(tt.advance)
			p, err = a.Authenticate(context.Background(), token)
			assertAuth(t, tt.wantSecond, p, err)
			assert.Equal(t, tt.wantCalls, id.calls.Load(), "questions to identity")
		})
	}
}

func assertAuth(t *testing.T, want bool, p auth.Principal, err error) {
	t.Helper()
	if want {
		require.NoError(t, err)
		assert.Equal(t, teamPrincipal, p)
		return
	}
	require.Error(t, err)
	assert.True(t, apperr.HasReason(err, apperr.Unauthenticated), "%v", err)
}

func TestIdentityFailuresAreNeverUnauthenticated(t *testing.T) {
	t.Parallel()
	signer := testSigner(t)
	closed := closedURL(t)
	tests := []struct {
		name      string
		instances func(id *fakeIdentity) []string
		answer    answer
		signer    *auth.Signer
	}{
		{name: "server error", instances: func(id *fakeIdentity) []string { return []string{id.url} },
			answer: answer{status: 500, body: `{"reason":"INTERNAL_ERROR"}`}},
		{name: "identity down", instances: func(*fakeIdentity) []string { return []string{closed} }},
		{name: "no instance", instances: func(*fakeIdentity) []string { return nil }},
		{name: "a service principal", instances: func(id *fakeIdentity) []string { return []string{id.url} },
			answer: answer{status: 200, principal: auth.Principal{Type: auth.TypeService, ID: "x"}}},
		{name: "an anonymous principal", instances: func(id *fakeIdentity) []string { return []string{id.url} },
			answer: answer{status: 200, principal: auth.Anonymous}},
		{name: "not json", instances: func(id *fakeIdentity) []string { return []string{id.url} },
			answer: answer{status: 200, body: `<html>`}},
		{name: "malformed expiry", instances: func(id *fakeIdentity) []string { return []string{id.url} },
			answer: answer{status: 200, principal: teamPrincipal, expires: "tomorrow"}},
		{name: "gateway signs with the wrong key", instances: func(id *fakeIdentity) []string { return []string{id.url} },
			answer: answer{status: 200, principal: teamPrincipal}, signer: mustSigner(t, "another-service-key-entirely")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id := newFakeIdentity(t, signer)
			id.set("btt_secret", tt.answer)
			s := signer
			if tt.signer != nil {
				s = tt.signer
			}
			a := newIdentity(t, IdentityConfig{Resolver: resolverFor(tt.instances(id)...), Signer: s, Timeout: 2 * time.Second})
			for range 2 {
				_, err := a.Authenticate(context.Background(), "btt_secret")
				require.Error(t, err)
				e, ok := apperr.As(err)
				require.True(t, ok)
				assert.Equal(t, apperr.DependencyUnavailable, e.Reason)
				assert.Equal(t, 503, e.Reason.Kind.HTTPStatus())
				assert.Positive(t, e.RetryAfter)
			}
			assert.Zero(t, a.accepted.len()+a.refused.len(), "failures are not cached")
		})
	}
}

func TestIdentityTriesAnotherInstance(t *testing.T) {
	t.Parallel()
	signer := testSigner(t)
	id := newFakeIdentity(t, signer)
	id.set("btt_secret", answer{status: 200, principal: teamPrincipal})
	// Whichever instance round robin starts at, the question reaches the live one.
	a := newIdentity(t, IdentityConfig{Resolver: resolverFor(closedURL(t), id.url), Signer: signer, TTL: -1})
	for range 4 {
		p, err := a.Authenticate(context.Background(), "btt_secret")
		require.NoError(t, err)
		assert.Equal(t, teamPrincipal, p)
	}
}

func TestIdentityRefusesWithoutAsking(t *testing.T) {
	t.Parallel()
	signer := testSigner(t)
	id := newFakeIdentity(t, signer)
	a := newIdentity(t, IdentityConfig{Resolver: resolverFor(id.url), Signer: signer})
	tests := []struct{ name, credential string }{
		{"none", ""},
		{"too long", string(make([]byte, MaxCredentialLength+1))},
	}
	for _, tt := range tests {
		_, err := a.Authenticate(context.Background(), tt.credential)
		assert.True(t, apperr.HasReason(err, apperr.Unauthenticated), tt.name)
	}
	assert.Zero(t, id.calls.Load())
}

func TestIdentityCachingOff(t *testing.T) {
	t.Parallel()
	signer := testSigner(t)
	id := newFakeIdentity(t, signer)
	id.set("btt_secret", answer{status: 200, principal: teamPrincipal})
	a := newIdentity(t, IdentityConfig{Resolver: resolverFor(id.url), Signer: signer, TTL: -1})
	for range 3 {
		_, err := a.Authenticate(context.Background(), "btt_secret")
		require.NoError(t, err)
		_, err = a.Authenticate(context.Background(), "btt_unknown")
		require.Error(t, err)
	}
	assert.Equal(t, int64(6), id.calls.Load())
}

func TestIdentityConcurrentMissesShareOneQuestion(t *testing.T) {
	t.Parallel()
	signer := testSigner(t)
	id := newFakeIdentity(t, signer)
	id.set("btt_secret", answer{status: 200, principal: teamPrincipal})
	id.hold = make(chan struct{})
	// Caching off: without sharing, every request would ask.
	a := newIdentity(t, IdentityConfig{Resolver: resolverFor(id.url), Signer: signer, TTL: -1})

	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			p, err := a.Authenticate(context.Background(), "btt_secret")
			if err == nil && p.ID != teamPrincipal.ID {
				err = fmt.Errorf("got %+v", p)
			}
			errs <- err
		})
	}
	require.Eventually(t, func() bool { return a.waiting.Load() == n }, 10*time.Second, time.Millisecond)
	close(id.hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, int64(1), id.calls.Load())
}

func TestCacheIsBounded(t *testing.T) {
	t.Parallel()
	signer := testSigner(t)
	id := newFakeIdentity(t, signer)
	id.set("btt_good", answer{status: 200, principal: teamPrincipal})
	a := newIdentity(t, IdentityConfig{Resolver: resolverFor(id.url), Signer: signer, CacheSize: 16})
	_, err := a.Authenticate(context.Background(), "btt_good")
	require.NoError(t, err)
	// A flood of bad tokens fills the refusal cache only, and only up to its bound.
	for i := range 100 {
		_, err := a.Authenticate(context.Background(), fmt.Sprintf("btt_bad_%d", i))
		require.Error(t, err)
	}
	assert.LessOrEqual(t, a.refused.len(), 16)
	assert.Equal(t, 1, a.accepted.len())
	calls := id.calls.Load()
	_, err = a.Authenticate(context.Background(), "btt_good")
	require.NoError(t, err)
	assert.Equal(t, calls, id.calls.Load(), "the good token is still cached")
}

func TestSweepDropsExpiredAnswers(t *testing.T) {
	t.Parallel()
	signer := testSigner(t)
	clk := newClock()
	id := newFakeIdentity(t, signer)
	id.set("btt_good", answer{status: 200, principal: teamPrincipal})
	a := newIdentity(t, IdentityConfig{Resolver: resolverFor(id.url), Signer: signer, Now: clk.Now})
	_, _ = a.Authenticate(context.Background(), "btt_good")
	_, _ = a.Authenticate(context.Background(), "btt_bad")
	require.Equal(t, 2, a.accepted.len()+a.refused.len())
	Chain{a}.Sweep(clk.Now().Add(2 * time.Second))
	assert.Equal(t, 1, a.accepted.len()+a.refused.len(), "the refusal expired")
	Chain{a}.Sweep(clk.Now().Add(10 * time.Second))
	assert.Zero(t, a.accepted.len()+a.refused.len())
}

func TestChain(t *testing.T) {
	t.Parallel()
	signer := testSigner(t)
	id := newFakeIdentity(t, signer)
	id.set("btt_team", answer{status: 200, principal: teamPrincipal})
	a := newIdentity(t, IdentityConfig{Resolver: resolverFor(id.url), Signer: signer})
	down := newIdentity(t, IdentityConfig{Resolver: resolverFor(), Signer: signer})
	tests := []struct {
		name       string
		chain      Chain
		credential string
		want       auth.Principal
		wantReason apperr.Reason
		wantCalls  int64
	}{
		{name: "bootstrap never reaches identity", chain: Chain{NewBootstrap("bt-boot"), a}, credential: "bt-boot", want: BootstrapPrincipal()},
		{name: "identity token", chain: Chain{NewBootstrap("bt-boot"), a}, credential: "btt_team", want: teamPrincipal, wantCalls: 1},
		{name: "unknown everywhere", chain: Chain{NewBootstrap("bt-boot"), a}, credential: "btt_nope", wantReason: apperr.Unauthenticated, wantCalls: 1},
		{name: "no credential", chain: Chain{NewBootstrap("bt-boot"), a}, credential: "", wantReason: apperr.Unauthenticated},
		{name: "identity down stays 503", chain: Chain{NewBootstrap("bt-boot"), down}, credential: "btt_team", wantReason: apperr.DependencyUnavailable},
		{name: "bootstrap while identity is down", chain: Chain{NewBootstrap("bt-boot"), down}, credential: "bt-boot", want: BootstrapPrincipal()},
		{name: "empty chain", chain: Chain{}, credential: "x", wantReason: apperr.Unauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := id.calls.Load()
			p, err := tt.chain.Authenticate(context.Background(), tt.credential)
			assert.Equal(t, tt.wantCalls, id.calls.Load()-before, "questions to identity")
			if tt.wantReason != (apperr.Reason{}) {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, tt.wantReason), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p)
		})
	}
}

func mustSigner(t testing.TB, key string) *auth.Signer {
	s, err := auth.NewSigner([]byte(key))
	require.NoError(t, err)
	return s
}

// closedURL returns the base URL of a loopback port nothing listens on until the test ends.
func closedURL(t testing.TB) string {
	t.Helper()
	return "http://" + testkit.ClosedAddr(t)
}

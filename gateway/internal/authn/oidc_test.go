package authn

import (
	"context"
	"crypto/x509"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/authn/oidctest"
	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

const testAudience = "baton"

// fakeSignIns answers sign-ins from a table of emails, as identity's internal endpoint does.
type fakeSignIns struct {
	mu      sync.Mutex
	answers map[string]signInAnswer
	calls   atomic.Int64
}

type signInAnswer struct {
	principal auth.Principal
	err       error
}

func newFakeSignIns() *fakeSignIns { return &fakeSignIns{answers: map[string]signInAnswer{}} }

func (f *fakeSignIns) set(email string, a signInAnswer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[email] = a
}

func (f *fakeSignIns) SignIn(_ context.Context, email, name string) (auth.Principal, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.answers[email]
	if !ok {
		// Nobody holds the email yet.
		return auth.Principal{Type: auth.TypeSession, Email: email, Name: name}, nil
	}
	return a.principal, a.err
}

var devSession = auth.Principal{Type: auth.TypeSession, ID: "u-dev", Name: "Dev", Email: "dev@example.com", Teams: map[string]string{"infra": "editor"}}

// oidcWorld is an issuer, identity's answers and a clock for one test.
type oidcWorld struct {
	issuer *oidctest.Issuer
	users  *fakeSignIns
	clk    *clock
}

func newOIDCWorld(t *testing.T) *oidcWorld {
	t.Helper()
	w := &oidcWorld{issuer: oidctest.New(t, testAudience), users: newFakeSignIns(), clk: newClock()}
	w.users.set("dev@example.com", signInAnswer{principal: devSession})
	return w
}

// authenticator returns an OIDC authenticator for the world's issuer; cfg's zero fields
// are filled.
func (w *oidcWorld) authenticator(t *testing.T, cfg OIDCConfig) *OIDC {
	t.Helper()
	if cfg.Issuer == "" {
		cfg.Issuer = w.issuer.URL
	}
	if cfg.Audience == "" {
		cfg.Audience = testAudience
	}
	cfg.Users, cfg.Now, cfg.Logger = w.users, w.clk.Now, quiet()
	o, err := NewOIDC(cfg)
	require.NoError(t, err)
	return o
}

// claims are valid claims for email now, changed by edit.
func (w *oidcWorld) claims(email string, edit func(map[string]any)) map[string]any {
	c := w.issuer.Claims(w.clk.Now(), email)
	if edit != nil {
		edit(c)
	}
	return c
}

func TestOIDCVerification(t *testing.T) {
	t.Parallel()
	w := newOIDCWorld(t)
	w.users.set("off@example.com", signInAnswer{err: apperr.New(apperr.Unauthenticated, "User 'off@example.com' is inactive.")})
	w.users.set("down@example.com", signInAnswer{err: unavailable(errors.New("identity down"))})
	now := w.clk.Now()
	valid := func(edit func(map[string]any)) func(t *testing.T) string {
		return func(t *testing.T) string { return w.issuer.Token(t, w.claims("dev@example.com", edit)) }
	}
	tests := []struct {
		name       string
		token      func(t *testing.T) string
		want       auth.Principal
		wantReason apperr.Reason
	}{
		{name: "valid: the mapped user's principal", token: valid(nil), want: devSession},
		{name: "audience among several", token: valid(func(c map[string]any) { c["aud"] = []string{"other", testAudience} }), want: devSession},
		{name: "expired within the leeway", token: valid(func(c map[string]any) { c["exp"] = now.Add(-10 * time.Second).Unix() }), want: devSession},
		{name: "not yet valid within the leeway", token: valid(func(c map[string]any) { c["nbf"] = now.Add(10 * time.Second).Unix() }), want: devSession},
		{name: "email_verified absent", token: valid(func(c map[string]any) { delete(c, "email_verified") }), want: devSession},
		{name: "unusual extra claims", token: valid(func(c map[string]any) { c["jti"], c["name"], c["groups"] = 42, []string{"x"}, "admins" }), want: devSession},
		{name: "first sign-in: no id yet", token: func(t *testing.T) string { return w.issuer.Token(t, w.claims("new@example.com", nil)) },
			want: auth.Principal{Type: auth.TypeSession, Email: "new@example.com", Name: "Name of new@example.com"}},

		{name: "wrong issuer", token: valid(func(c map[string]any) { c["iss"] = "https://evil.example.com" }), wantReason: apperr.Unauthenticated},
		{name: "wrong audience", token: valid(func(c map[string]any) { c["aud"] = "someone-else" }), wantReason: apperr.Unauthenticated},
		{name: "no audience", token: valid(func(c map[string]any) { delete(c, "aud") }), wantReason: apperr.Unauthenticated},
		{name: "expired", token: valid(func(c map[string]any) { c["exp"] = now.Add(-time.Minute).Unix() }), wantReason: apperr.Unauthenticated},
		{name: "no expiry", token: valid(func(c map[string]any) { delete(c, "exp") }), wantReason: apperr.Unauthenticated},
		{name: "not yet valid", token: valid(func(c map[string]any) { c["nbf"] = now.Add(time.Hour).Unix() }), wantReason: apperr.Unauthenticated},
		{name: "issued in the future", token: valid(func(c map[string]any) { c["iat"] = now.Add(time.Hour).Unix() }), wantReason: apperr.Unauthenticated},
		{name: "no email", token: valid(func(c map[string]any) { delete(c, "email") }), wantReason: apperr.Unauthenticated},
		{name: "email not a string", token: valid(func(c map[string]any) { c["email"] = 42 }), wantReason: apperr.Unauthenticated},
		{name: "email not verified", token: valid(func(c map[string]any) { c["email_verified"] = false }), wantReason: apperr.Unauthenticated},
		{name: "email not verified, as a string", token: valid(func(c map[string]any) { c["email_verified"] = "false" }), wantReason: apperr.Unauthenticated},
		{name: "bad signature", token: func(t *testing.T) string {
			// The payload of one token under the signature of another.
			a := strings.Split(w.issuer.Token(t, w.claims("dev@example.com", nil)), ".")
			b := strings.Split(w.issuer.Token(t, w.claims("admin@example.com", nil)), ".")
			return a[0] + "." + b[1] + "." + a[2]
		}, wantReason: apperr.Unauthenticated},
		{name: "alg none", token: func(t *testing.T) string {
			return oidctest.Unsigned(t, w.issuer.SigningKey().ID, w.claims("dev@example.com", nil))
		}, wantReason: apperr.Unauthenticated},
		{name: "HMAC keyed with the issuer's public key", token: func(t *testing.T) string {
			k := w.issuer.SigningKey()
			der, err := x509.MarshalPKIXPublicKey(&k.Private.PublicKey)
			require.NoError(t, err)
			return oidctest.SignHMAC(t, k.ID, der, w.claims("dev@example.com", nil))
		}, wantReason: apperr.Unauthenticated},
		{name: "unknown kid", token: func(t *testing.T) string {
			return oidctest.Sign(t, oidctest.NewKey(t, "not-published"), jose.RS256, w.claims("dev@example.com", nil))
		}, wantReason: apperr.Unauthenticated},
		{name: "a foreign key under a published kid", token: func(t *testing.T) string {
			return oidctest.Sign(t, oidctest.NewKey(t, w.issuer.SigningKey().ID), jose.RS256, w.claims("dev@example.com", nil))
		}, wantReason: apperr.Unauthenticated},
		{name: "inactive user", token: func(t *testing.T) string { return w.issuer.Token(t, w.claims("off@example.com", nil)) },
			wantReason: apperr.Unauthenticated},
		{name: "identity down is 503", token: func(t *testing.T) string { return w.issuer.Token(t, w.claims("down@example.com", nil)) },
			wantReason: apperr.DependencyUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := w.authenticator(t, OIDCConfig{})
			token := tt.token(t)
			require.True(t, o.Handles(token), "a JWT by its shape")
			p, err := o.Authenticate(context.Background(), token)
			if tt.wantReason != (apperr.Reason{}) {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, tt.wantReason), "%v", err)
				assert.Equal(t, auth.Principal{}, p)
				assert.NotContains(t, err.Error(), token)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p)
		})
	}
}

func TestOIDCCachesPrincipals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		exp       time.Duration // of the JWT, from now
		advance   time.Duration
		wantCalls int64 // questions to identity after two requests
	}{
		{name: "reused within the TTL", exp: time.Hour, advance: 4 * time.Second, wantCalls: 1},
		{name: "asked again after the TTL", exp: time.Hour, advance: 5 * time.Second, wantCalls: 2},
		{name: "never past the JWT's expiry", exp: 2 * time.Second, advance: 2 * time.Second, wantCalls: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newOIDCWorld(t)
			o := w.authenticator(t, OIDCConfig{TTL: 5 * time.Second})
			token := w.issuer.Token(t, w.claims("dev@example.com", func(c map[string]any) {
				c["exp"] = w.clk.Now().Add(tt.exp).Unix()
			}))
			for i := range 2 {
				p, err := o.Authenticate(context.Background(), token)
				require.NoError(t, err, "request %d", i+1)
				assert.Equal(t, devSession, p)
				w.clk.advance(tt.advance)
			}
			assert.Equal(t, tt.wantCalls, w.users.calls.Load())
		})
	}
}

func TestOIDCFirstSignInIsNotCached(t *testing.T) {
	t.Parallel()
	w := newOIDCWorld(t)
	o := w.authenticator(t, OIDCConfig{TTL: time.Hour})
	token := w.issuer.Token(t, w.claims("grace@example.com", nil))

	p, err := o.Authenticate(context.Background(), token)
	require.NoError(t, err)
	assert.Equal(t, auth.Principal{Type: auth.TypeSession, Email: "grace@example.com", Name: "Name of grace@example.com"}, p)

	// GET /profile registers Grace; the same JWT is her user from the next request on.
	grace := auth.Principal{Type: auth.TypeSession, ID: "u-grace", Email: "grace@example.com"}
	w.users.set("grace@example.com", signInAnswer{principal: grace})
	for range 2 {
		p, err = o.Authenticate(context.Background(), token)
		require.NoError(t, err)
		assert.Equal(t, grace, p)
	}
	assert.EqualValues(t, 2, w.users.calls.Load(), "the registered user's principal is cached")
}

func TestOIDCRefusalsAreCachedBriefly(t *testing.T) {
	t.Parallel()
	w := newOIDCWorld(t)
	w.users.set("off@example.com", signInAnswer{err: apperr.New(apperr.Unauthenticated, "inactive")})
	o := w.authenticator(t, OIDCConfig{})
	token := w.issuer.Token(t, w.claims("off@example.com", nil))
	for range 2 {
		_, err := o.Authenticate(context.Background(), token)
		assert.True(t, apperr.HasReason(err, apperr.Unauthenticated), "%v", err)
	}
	assert.EqualValues(t, 1, w.users.calls.Load())

	w.users.set("off@example.com", signInAnswer{principal: devSession})
	w.clk.advance(DefaultNegativeTTL)
	_, err := o.Authenticate(context.Background(), token)
	require.NoError(t, err, "an activated user signs in once the refusal is forgotten")
}

func TestOIDCKeyRotation(t *testing.T) {
	t.Parallel()
	w := newOIDCWorld(t)
	o := w.authenticator(t, OIDCConfig{TTL: -1})
	ctx := context.Background()
	sign := func() string { return w.issuer.Token(t, w.claims("dev@example.com", nil)) }
	old := sign()
	_, err := o.Authenticate(ctx, old)
	require.NoError(t, err)
	require.EqualValues(t, 1, w.issuer.KeyFetches())

	// The issuer signs with a new key. Right after a fetch, the gateway does not fetch again
	// for it (nor for any made-up key id): the token waits for the refresh interval.
	w.issuer.Rotate(t)
	rotated := sign()
	for i := range 5 {
		bogus := oidctest.Sign(t, oidctest.NewKey(t, "made-up"), jose.RS256, w.claims("dev@example.com", func(c map[string]any) { c["jti"] = i }))
		_, err = o.Authenticate(ctx, bogus)
		assert.True(t, apperr.HasReason(err, apperr.Unauthenticated), "%v", err)
	}
	_, err = o.Authenticate(ctx, rotated)
	assert.True(t, apperr.HasReason(err, apperr.Unauthenticated), "%v", err)
	assert.EqualValues(t, 1, w.issuer.KeyFetches(), "unknown key ids cost the issuer nothing within the interval")

	w.clk.advance(DefaultKeyRefreshInterval)
	rotated = sign() // a new token: the refusal of the other is remembered for a second
	p, err := o.Authenticate(ctx, rotated)
	require.NoError(t, err)
	assert.Equal(t, devSession, p)
	assert.EqualValues(t, 2, w.issuer.KeyFetches())
	_, err = o.Authenticate(ctx, old)
	require.NoError(t, err, "the old key is still published")

	// The issuer withdraws the old key: once the keys held are older than their maximum
	// age, they are fetched again and the old key stops verifying.
	w.issuer.Retire()
	w.clk.advance(DefaultKeyMaxAge)
	_, err = o.Authenticate(ctx, w.issuer.Token(t, w.claims("dev@example.com", nil)))
	require.NoError(t, err)
	assert.EqualValues(t, 3, w.issuer.KeyFetches())
	_, err = o.Authenticate(ctx, old)
	assert.True(t, apperr.HasReason(err, apperr.Unauthenticated), "%v", err)
	assert.EqualValues(t, 3, w.issuer.KeyFetches())
}

func TestOIDCIssuerUnavailable(t *testing.T) {
	t.Parallel()
	w := newOIDCWorld(t)
	token := w.issuer.Token(t, w.claims("dev@example.com", nil))
	tests := []struct {
		name       string
		cfg        OIDCConfig
		wantReason apperr.Reason
	}{
		{name: "discovery unreachable", cfg: OIDCConfig{Issuer: closedURL(t)}, wantReason: apperr.DependencyUnavailable},
		{name: "key set unreachable", cfg: OIDCConfig{JWKSURL: closedURL(t) + "/keys"}, wantReason: apperr.DependencyUnavailable},
		{name: "discovery names another issuer", cfg: OIDCConfig{Issuer: w.issuer.URL + "/"}, wantReason: apperr.DependencyUnavailable},
		{name: "configured key set, no discovery", cfg: OIDCConfig{JWKSURL: w.issuer.URL + "/keys"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := w.authenticator(t, tt.cfg)
			p, err := o.Authenticate(context.Background(), token)
			if tt.wantReason != (apperr.Reason{}) {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, tt.wantReason), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, devSession, p)
		})
	}
}

func TestIsJWT(t *testing.T) {
	t.Parallel()
	w := newOIDCWorld(t)
	signed := w.issuer.Token(t, w.claims("dev@example.com", nil))
	tests := []struct {
		name string
		give string
		want bool
	}{
		{name: "a signed JWT", give: signed, want: true},
		{name: "an unsigned JWT", give: oidctest.Unsigned(t, "k", map[string]any{"sub": "x"}), want: true},
		{name: "an opaque token", give: "btt_" + strings.Repeat("a", 43), want: false},
		{name: "two dots, header not base64", give: "a!b.c.d", want: false},
		{name: "two dots, header not an object", give: "ImFsZyI.e30.", want: false},
		{name: "header without alg", give: "eyJ0eXAiOiJKV1QifQ.e30.", want: false},
		{name: "five parts (a JWE)", give: signed + ".x.y", want: false},
		{name: "one dot", give: "eyJhbGciOiJSUzI1NiJ9.e30", want: false},
		{name: "empty", give: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, IsJWT(tt.give))
		})
	}
}

// BenchmarkOIDCAuthenticate measures Authenticate for a JWT: "cached" is a hit (hashing the
// JWT and a map lookup), "uncached" verifies the RS256 signature and the claims and asks an
// in-memory identity every time.
func BenchmarkOIDCAuthenticate(b *testing.B) {
	issuer := oidctest.New(b, testAudience)
	users := newFakeSignIns()
	users.set("dev@example.com", signInAnswer{principal: devSession})
	token := issuer.Token(b, issuer.Claims(time.Now(), "dev@example.com"))
	for _, tc := range []struct {
		name string
		ttl  time.Duration
	}{{"cached", time.Hour}, {"uncached", -1}} {
		b.Run(tc.name, func(b *testing.B) {
			o, err := NewOIDC(OIDCConfig{Issuer: issuer.URL, Audience: testAudience, Users: users, TTL: tc.ttl, Logger: quiet()})
			require.NoError(b, err)
			ctx := context.Background()
			if _, err := o.Authenticate(ctx, token); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := o.Authenticate(ctx, token); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package authn

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	// go-oidc is the maintained OpenID Connect client for Go: discovery (with the check that
	// the issuer's document names the configured issuer) and JWT verification (one
	// signature, by an allowed algorithm, from the issuer, for the audience). It is given a
	// key set of ours (see keySet) and the expiry is checked here, with a small leeway.
	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/sync/singleflight"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

// Defaults of OIDCConfig.
const (
	// DefaultEmailClaim is the claim that names the user signing in.
	DefaultEmailClaim = "email"
	// DefaultOIDCLeeway tolerates clock skew between the gateway and the issuer.
	DefaultOIDCLeeway = 30 * time.Second
	// DefaultKeyRefreshInterval is the least time between two fetches of the issuer's keys
	// (and between two attempts at discovery): a key the issuer has just added verifies
	// within it, and tokens naming unknown keys cost the issuer at most one fetch per it.
	DefaultKeyRefreshInterval = 10 * time.Second
	// DefaultKeyMaxAge is how long fetched keys are used before they are fetched again, so
	// a key the issuer withdraws stops verifying.
	DefaultKeyMaxAge = time.Hour
	// DefaultOIDCTimeout bounds one fetch from the issuer (discovery, keys).
	DefaultOIDCTimeout = 5 * time.Second
)

// SignIns maps the email of a verified JWT onto the principal it acts for; *Identity is one.
type SignIns interface {
	// SignIn returns the session principal of the user holding email, or one without an
	// id for an email nobody holds yet; an UNAUTHENTICATED error refuses the sign-in.
	SignIn(ctx context.Context, email, name string) (auth.Principal, error)
}

// OIDCConfig shapes an OIDC authenticator.
type OIDCConfig struct {
	// Issuer is the OpenID Connect issuer: tokens must name it in "iss" exactly. Required.
	Issuer string
	// Audience must be among a token's "aud" values. Required.
	Audience string
	// JWKSURL is where the issuer publishes its signing keys; when empty it is discovered
	// from <Issuer>/.well-known/openid-configuration on the first JWT.
	JWKSURL string
	// EmailClaim names the claim holding the user's email; DefaultEmailClaim when empty.
	EmailClaim string
	// Users maps verified emails onto principals. Required.
	Users SignIns
	// TTL is the longest a verified JWT's principal is reused (never past the JWT's
	// expiry); DefaultCacheTTL when zero, no caching when negative.
	TTL time.Duration
	// NegativeTTL is the longest a refused JWT is refused without checking again;
	// DefaultNegativeTTL when zero, and never longer than TTL.
	NegativeTTL time.Duration
	// CacheSize bounds the entries of each cache; DefaultCacheSize when zero.
	CacheSize int
	// Leeway tolerates clock skew on exp, nbf and iat; DefaultOIDCLeeway when zero.
	Leeway time.Duration
	// KeyRefreshInterval: see DefaultKeyRefreshInterval, the default when zero.
	KeyRefreshInterval time.Duration
	// KeyMaxAge: see DefaultKeyMaxAge, the default when zero.
	KeyMaxAge time.Duration
	// HTTPClient fetches discovery and keys; one with a DefaultOIDCTimeout timeout when nil.
	HTTPClient *http.Client
	// Logger receives the issuer's failures, and refused JWTs at debug level; slog.Default
	// when nil.
	Logger *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// OIDC authenticates signed JWTs of an OpenID Connect issuer: it verifies the signature
// with the issuer's published keys (public-key algorithms only), the issuer, the audience,
// expiry and not-before, then asks Users whom the token's email acts for. Answers are
// remembered like Identity's, keyed by the SHA-256 of the JWT: accepted ones for at most TTL
// and never past the JWT's expiry, refused ones for at most NegativeTTL. The principal of a
// sign-in nobody is registered for yet is not remembered, so the user's registration takes
// effect on the next request. When the issuer's keys cannot be fetched, requests fail with
// 503, never 401.
type OIDC struct {
	issuer     string
	audience   string
	emailClaim string
	users      SignIns
	client     *http.Client
	ttl        time.Duration
	negTTL     time.Duration
	leeway     time.Duration
	refresh    time.Duration
	maxAge     time.Duration
	now        func() time.Time
	log        *slog.Logger
	accepted   *cache
	refused    *cache
	calls      singleflight.Group

	mu         sync.Mutex
	verifier   *oidc.IDTokenVerifier // nil until discovered
	keys       *keySet
	discovered time.Time // when discovery was last tried
}

// NewOIDC returns an OIDC authenticator; Issuer, Audience and Users are required. Nothing
// is fetched from the issuer until the first JWT arrives, so the gateway starts while the
// issuer is down.
func NewOIDC(cfg OIDCConfig) (*OIDC, error) {
	if cfg.Issuer == "" || cfg.Audience == "" || cfg.Users == nil {
		return nil, errors.New("authn: OIDC authentication needs an issuer, an audience and identity")
	}
	if cfg.EmailClaim == "" {
		cfg.EmailClaim = DefaultEmailClaim
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultCacheTTL
	}
	if cfg.NegativeTTL == 0 {
		cfg.NegativeTTL = DefaultNegativeTTL
	}
	cfg.NegativeTTL = min(cfg.NegativeTTL, cfg.TTL)
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = DefaultOIDCLeeway
	}
	if cfg.KeyRefreshInterval <= 0 {
		cfg.KeyRefreshInterval = DefaultKeyRefreshInterval
	}
	if cfg.KeyMaxAge <= 0 {
		cfg.KeyMaxAge = DefaultKeyMaxAge
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: DefaultOIDCTimeout}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	o := &OIDC{
		issuer:     cfg.Issuer,
		audience:   cfg.Audience,
		emailClaim: cfg.EmailClaim,
		users:      cfg.Users,
		client:     cfg.HTTPClient,
		ttl:        cfg.TTL,
		negTTL:     cfg.NegativeTTL,
		leeway:     cfg.Leeway,
		refresh:    cfg.KeyRefreshInterval,
		maxAge:     cfg.KeyMaxAge,
		now:        cfg.Now,
		log:        cfg.Logger,
		accepted:   newCache(cfg.CacheSize),
		refused:    newCache(cfg.CacheSize),
	}
	if cfg.JWKSURL != "" {
		o.useKeys(cfg.JWKSURL)
	}
	return o, nil
}

// Handles implements Shaped: the OIDC authenticator has the last word on JWTs.
func (o *OIDC) Handles(credential string) bool { return IsJWT(credential) }

// IsJWT reports whether credential has the shape of a JWT in compact form: three
// dot-separated parts, the first a base64url JSON object naming an "alg". Only the header
// is looked at; whether the rest is anything is the verifier's to say.
func IsJWT(credential string) bool {
	header, rest, ok := strings.Cut(credential, ".")
	if !ok || header == "" || strings.Count(rest, ".") != 1 || len(header) > 4<<10 {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(header)
	if err != nil {
		return false
	}
	var h struct {
		Alg *string `json:"alg"`
	}
	return json.Unmarshal(raw, &h) == nil && h.Alg != nil
}

// Forget drops what is remembered of the JWT credential (see Identity.Forget).
func (o *OIDC) Forget(credential string) { o.accepted.forget(sha256.Sum256([]byte(credential))) }

// Authenticate implements Authenticator.
func (o *OIDC) Authenticate(ctx context.Context, credential string) (auth.Principal, error) {
	key, e, err := remembered(o.accepted, o.refused, credential, o.now())
	if err != nil || e != nil {
		return cachedAnswer(e, err)
	}

	ch := o.calls.DoChan(string(key[:]), func() (any, error) { return o.check(ctx, credential, key) })
	select {
	case res := <-ch:
		if res.Err != nil {
			return auth.Principal{}, res.Err
		}
		e := res.Val.(cacheEntry)
		if e.err != nil {
			return auth.Principal{}, e.err
		}
		return e.principal, nil
	case <-ctx.Done():
		// The check goes on for the others waiting on it; this request has gone.
		return auth.Principal{}, apperr.Wrap(apperr.DependencyUnavailable, ctx.Err(), "The credential could not be checked in time.")
	}
}

// Sweep drops expired answers; the gateway calls it now and then.
func (o *OIDC) Sweep(now time.Time) {
	o.accepted.sweep(now)
	o.refused.sweep(now)
}

// signInClaims are the claims check reads itself; go-oidc has read iss, aud and sub. Other
// claims are not decoded, so an issuer's unusual extra claims cannot fail a sign-in.
type signInClaims struct {
	Expiry    *jwt.NumericDate `json:"exp"`
	NotBefore *jwt.NumericDate `json:"nbf"`
	IssuedAt  *jwt.NumericDate `json:"iat"`
	Name      json.RawMessage  `json:"name"`
	// EmailVerified is false when the issuer says it has not checked the address: such a
	// token must not act for whoever holds the address here.
	EmailVerified json.RawMessage `json:"email_verified"`
}

// check verifies raw, maps it to a principal and caches the answer: an entry with the
// principal, or with the refusal. An error means the issuer or identity could not answer.
func (o *OIDC) check(ctx context.Context, raw string, key [sha256.Size]byte) (cacheEntry, error) {
	// Shared by every request waiting on this JWT, so none of theirs may end it. The
	// issuer and identity each bound their own questions within it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*DefaultOIDCTimeout+DefaultIdentityTimeout)
	defer cancel()
	verifier, keys, err := o.verifierFor(ctx)
	if err != nil {
		return cacheEntry{}, issuerUnavailable(err)
	}
	if err := keys.ready(ctx); err != nil {
		return cacheEntry{}, issuerUnavailable(err)
	}
	tok, err := verifier.Verify(ctx, raw)
	if err != nil {
		return o.refuse(ctx, key, "The JWT could not be verified.", err), nil
	}
	var claims signInClaims
	var all map[string]json.RawMessage
	if err := tok.Claims(&claims); err != nil {
		return o.refuse(ctx, key, "The JWT could not be verified.", err), nil
	}
	if err := tok.Claims(&all); err != nil {
		return o.refuse(ctx, key, "The JWT could not be verified.", err), nil
	}
	now := o.now()
	if claims.Expiry == nil {
		return o.refuse(ctx, key, "The JWT has no expiry.", errors.New("no exp claim")), nil
	}
	times := jwt.Claims{Expiry: claims.Expiry, NotBefore: claims.NotBefore, IssuedAt: claims.IssuedAt}
	if err := times.ValidateWithLeeway(jwt.Expected{Time: now}, o.leeway); err != nil {
		msg := "The JWT is not valid at this time."
		if errors.Is(err, jwt.ErrExpired) {
			msg = "The JWT has expired."
		}
		return o.refuse(ctx, key, msg, err), nil
	}
	var email string
	if err := json.Unmarshal(all[o.emailClaim], &email); err != nil || strings.TrimSpace(email) == "" {
		return o.refuse(ctx, key, "The JWT names no email in its "+o.emailClaim+" claim.", errors.New("no email claim")), nil
	}
	if v := strings.Trim(string(claims.EmailVerified), `"`); v == "false" {
		return o.refuse(ctx, key, "The JWT's email is not verified.", errors.New("email_verified is false")), nil
	}

	var name string
	_ = json.Unmarshal(claims.Name, &name) // a name that is not a string is no name
	p, err := o.users.SignIn(ctx, strings.TrimSpace(email), strings.TrimSpace(name))
	if apperr.HasReason(err, apperr.Unauthenticated) {
		return o.refuse(ctx, key, "This user may not sign in.", err), nil
	}
	if err != nil {
		return cacheEntry{}, err
	}
	e := cacheEntry{principal: p, expires: now.Add(o.ttl)}
	if exp := claims.Expiry.Time(); exp.Before(e.expires) {
		e.expires = exp
	}
	// Not remembered for a user not registered yet: GET /profile is about to register them,
	// and the next request must find the user, not this principal.
	if p.ID != "" && o.ttl > 0 && e.expires.After(now) {
		o.accepted.put(key, e, now)
	}
	return e, nil
}

// refuse remembers that the JWT with key is refused and returns the entry: msg for the
// caller, why in the debug log (never the token).
func (o *OIDC) refuse(ctx context.Context, key [sha256.Size]byte, msg string, why error) cacheEntry {
	o.log.DebugContext(ctx, "refused a JWT", slog.String("reason", why.Error()))
	now := o.now()
	e := cacheEntry{err: apperr.New(apperr.Unauthenticated, "%s", msg), expires: now.Add(o.negTTL)}
	if o.negTTL > 0 {
		o.refused.put(key, e, now)
	}
	return e
}

// verifierFor returns the verifier and its key set, discovering the issuer's key set first
// when needed. A failed discovery is not tried again within the refresh interval.
func (o *OIDC) verifierFor(ctx context.Context) (*oidc.IDTokenVerifier, *keySet, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.verifier != nil {
		return o.verifier, o.keys, nil
	}
	now := o.now()
	if !o.discovered.IsZero() && now.Sub(o.discovered) < o.refresh {
		return nil, nil, errors.New("discovery failed a moment ago")
	}
	o.discovered = now
	ctx, cancel := context.WithTimeout(ctx, DefaultOIDCTimeout)
	defer cancel()
	provider, err := oidc.NewProvider(oidc.ClientContext(ctx, o.client), o.issuer)
	if err != nil {
		o.log.WarnContext(ctx, "could not discover the OIDC issuer", slog.String("issuer", o.issuer), slog.String("error", err.Error()))
		return nil, nil, err
	}
	var doc struct {
		JWKSURL string `json:"jwks_uri"`
	}
	if err := provider.Claims(&doc); err != nil || doc.JWKSURL == "" {
		o.log.WarnContext(ctx, "the OIDC issuer's discovery document names no jwks_uri", slog.String("issuer", o.issuer))
		return nil, nil, errors.New("no jwks_uri in the discovery document")
	}
	o.useKeysLocked(doc.JWKSURL)
	return o.verifier, o.keys, nil
}

// useKeys sets up verification with the key set at url.
func (o *OIDC) useKeys(url string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.useKeysLocked(url)
}

func (o *OIDC) useKeysLocked(url string) {
	o.keys = &keySet{
		url: url, client: o.client, refresh: o.refresh, maxAge: o.maxAge,
		timeout: DefaultOIDCTimeout, now: o.now, log: o.log,
	}
	algs := make([]string, len(signingAlgs))
	for i, a := range signingAlgs {
		algs[i] = string(a)
	}
	o.verifier = oidc.NewVerifier(o.issuer, o.keys, &oidc.Config{
		ClientID:             o.audience,
		SupportedSigningAlgs: algs,
		// Checked in check with go-jose's validation and our leeway: go-oidc allows no
		// leeway on exp and five minutes on nbf.
		SkipExpiryCheck: true,
		Now:             o.now,
	})
}

func issuerUnavailable(cause error) error {
	return apperr.Wrap(apperr.DependencyUnavailable, cause,
		"The sign-in issuer's keys could not be fetched to check the JWT; try again shortly.").WithRetryAfter(time.Second)
}

package authn

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel"
	"golang.org/x/sync/singleflight"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/registry"
)

// Defaults of IdentityConfig.
const (
	// DefaultCacheTTL bounds how long a revoked token keeps working at the gateway.
	DefaultCacheTTL = 5 * time.Second
	// DefaultNegativeTTL is how long a refused credential is refused without asking again.
	DefaultNegativeTTL = time.Second
	// DefaultCacheSize bounds each of the two caches (accepted and refused credentials).
	DefaultCacheSize = 10_000
	// DefaultIdentityTimeout bounds one question to identity, every attempt included.
	DefaultIdentityTimeout = 5 * time.Second
	// MaxCredentialLength: anything longer is refused without asking (a signed JWT is a
	// few kilobytes at most).
	MaxCredentialLength = 8 << 10
)

// maxIdentityAttempts bounds the identity instances one question tries.
const maxIdentityAttempts = 2

// IdentityConfig shapes an Identity authenticator.
type IdentityConfig struct {
	// Resolver finds identity's instances.
	Resolver registry.Resolver
	// Signer signs the gateway's own principal into each question: identity's internal
	// endpoints answer Baton's services only.
	Signer *auth.Signer
	// TTL is the longest an answer is reused; DefaultCacheTTL when zero, no caching when
	// negative.
	TTL time.Duration
	// NegativeTTL is the longest a refusal is reused; DefaultNegativeTTL when zero, and
	// never longer than TTL.
	NegativeTTL time.Duration
	// CacheSize bounds the entries of each cache; DefaultCacheSize when zero.
	CacheSize int
	// Timeout bounds one question; DefaultIdentityTimeout when zero.
	Timeout time.Duration
	// Logger receives identity's failures; slog.Default when nil.
	Logger *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Identity authenticates credentials by asking the identity service (POST
// /internal/v1/authenticate, whose contract is libs/identityapi), and remembers the
// answers briefly, keyed by the SHA-256 of the credential (never the credential itself):
// accepted ones for at most TTL and never past the token's expiry, refused ones for at most
// NegativeTTL so a bad token cannot hammer identity. Concurrent misses for one credential
// share one question. When identity cannot answer, requests fail with 503, never 401.
type Identity struct {
	resolver registry.Resolver
	client   *fasthttp.Client
	headers  [][2]string
	ttl      time.Duration
	negTTL   time.Duration
	timeout  time.Duration
	now      func() time.Time
	log      *slog.Logger
	accepted *cache
	refused  *cache
	calls    singleflight.Group
	next     atomic.Uint64
	// waiting counts requests waiting for identity's answer (tests watch it).
	waiting atomic.Int64
}

// gatewayPrincipal is who the gateway is when it asks identity.
var gatewayPrincipal = auth.Principal{Type: auth.TypeService, ID: "gateway", Name: "gateway"}

// NewIdentity returns an Identity authenticator; Resolver and Signer are required.
func NewIdentity(cfg IdentityConfig) (*Identity, error) {
	if cfg.Resolver == nil || cfg.Signer == nil {
		return nil, errors.New("authn: identity authentication needs a resolver and a signer")
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
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultIdentityTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &Identity{
		resolver: cfg.Resolver,
		client: &fasthttp.Client{
			Name:                     "baton-gateway",
			NoDefaultUserAgentHeader: true,
			MaxConnsPerHost:          256,
			MaxIdleConnDuration:      30 * time.Second,
			DisablePathNormalizing:   true,
		},
		ttl:      cfg.TTL,
		negTTL:   cfg.NegativeTTL,
		timeout:  cfg.Timeout,
		now:      cfg.Now,
		log:      cfg.Logger,
		accepted: newCache(cfg.CacheSize),
		refused:  newCache(cfg.CacheSize),
	}
	// The gateway's principal never changes, so it is signed once.
	if err := cfg.Signer.SetHeaders(gatewayPrincipal, func(k, v string) {
		a.headers = append(a.headers, [2]string{k, v})
	}); err != nil {
		return nil, fmt.Errorf("authn: %w", err)
	}
	return a, nil
}

// Authenticate implements Authenticator.
func (a *Identity) Authenticate(ctx context.Context, credential string) (auth.Principal, error) {
	key, e, err := remembered(a.accepted, a.refused, credential, a.now())
	if err != nil || e != nil {
		return cachedAnswer(e, err)
	}

	a.waiting.Add(1)
	defer a.waiting.Add(-1)
	ch := a.calls.DoChan(string(key[:]), func() (any, error) { return a.ask(ctx, credential, key) })
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
		// The question goes on for the others waiting on it; this request has gone.
		return auth.Principal{}, apperr.Wrap(apperr.DependencyUnavailable, ctx.Err(), "The credential could not be checked in time.")
	}
}

// Forget drops what is remembered of credential, so its next request sees changes the
// caller just made to its own memberships.
func (a *Identity) Forget(credential string) { a.accepted.forget(sha256.Sum256([]byte(credential))) }

// Sweep drops expired answers; the gateway calls it now and then.
func (a *Identity) Sweep(now time.Time) {
	a.accepted.sweep(now)
	a.refused.sweep(now)
}

// ask puts the question to identity and caches the answer: an entry with a principal, or
// with the refusal to answer. An error means identity could not answer.
func (a *Identity) ask(ctx context.Context, credential string, key [sha256.Size]byte) (cacheEntry, error) {
	// Shared by every request waiting on this credential, so none of theirs may end it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.timeout)
	defer cancel()
	body, err := json.Marshal(identityapi.AuthenticateRequest{Token: credential})
	if err != nil {
		return cacheEntry{}, unavailable(err)
	}
	e, err := a.question(ctx, body, a.readToken)
	if err != nil {
		return cacheEntry{}, err
	}
	a.remember(key, e)
	return e, nil
}

// SignIn asks identity whom a verified sign-in with email acts for (see OIDC): the session
// principal of the user holding the email, or, for an email nobody holds yet, a session
// principal without an id that only GET /profile accepts. An inactive or deleted user is
// an UNAUTHENTICATED error; identity not answering is DEPENDENCY_UNAVAILABLE. Nothing is
// cached here: the caller caches by its own credential.
func (a *Identity) SignIn(ctx context.Context, email, name string) (auth.Principal, error) {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	body, err := json.Marshal(identityapi.AuthenticateRequest{Email: email, Name: name})
	if err != nil {
		return auth.Principal{}, unavailable(err)
	}
	e, err := a.question(ctx, body, func(resp *fasthttp.Response) (cacheEntry, error) {
		return a.readSignIn(resp, email)
	})
	if err != nil {
		return auth.Principal{}, err
	}
	return e.principal, e.err
}

// Handles implements Shaped: identity authenticates Baton's opaque tokens,
// bt<g|t|w|u|s>_…, and nothing else (a JWT, the bootstrap token, a guess) reaches it.
func (a *Identity) Handles(credential string) bool { return IsOpaqueToken(credential) }

// IsOpaqueToken reports whether credential has the prefix of Baton's opaque tokens,
// bt<g|t|w|u|s>_. Identity checks the rest.
func IsOpaqueToken(credential string) bool {
	return len(credential) > 4 && credential[0] == 'b' && credential[1] == 't' &&
		strings.IndexByte("gtwus", credential[2]) >= 0 && credential[3] == '_'
}

// question asks identity's instances in turn, at most maxIdentityAttempts, until one
// answers in a way read makes sense of; an error means none did. It goes over the
// gateway's own fasthttp client rather than identityapi.Client: every request that misses
// the cache waits on it, and the gateway's principal is signed once, not per question.
func (a *Identity) question(ctx context.Context, body []byte, read func(*fasthttp.Response) (cacheEntry, error)) (cacheEntry, error) {
	instances, err := a.resolver.Resolve(ctx, identityapi.Service)
	if err != nil || len(instances) == 0 {
		return cacheEntry{}, unavailable(err)
	}
	start := int(a.next.Add(1) % uint64(len(instances)))
	var lastErr error
	for i := range min(len(instances), maxIdentityAttempts) {
		base := instances[(start+i)%len(instances)]
		e, err := a.call(ctx, base, body, read)
		if err == nil {
			return e, nil
		}
		lastErr = err
		// The error never holds the credential: only the instance and what went wrong.
		a.log.WarnContext(ctx, "identity could not authenticate a credential",
			slog.String("instance", base), slog.String("error", err.Error()), slog.Int("attempt", i+1))
		if ctx.Err() != nil {
			break
		}
	}
	return cacheEntry{}, unavailable(lastErr)
}

// call asks one identity instance and reads its answer with read.
func (a *Identity) call(ctx context.Context, base string, body []byte, read func(*fasthttp.Response) (cacheEntry, error)) (cacheEntry, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(base + identityapi.AuthenticatePath)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	for _, h := range a.headers {
		req.Header.Set(h[0], h[1])
	}
	otel.GetTextMapPropagator().Inject(ctx, headerCarrier{&req.Header})
	req.SetBodyRaw(body)
	deadline, _ := ctx.Deadline()
	if err := a.client.DoDeadline(req, resp, deadline); err != nil {
		return cacheEntry{}, err
	}
	return read(resp)
}

// readToken reads identity's answer about a token: the principal, kept at most until the
// token expires, or the refusal.
func (a *Identity) readToken(resp *fasthttp.Response) (cacheEntry, error) {
	switch resp.StatusCode() {
	case fasthttp.StatusOK:
		var p auth.Principal
		if err := json.Unmarshal(resp.Body(), &p); err != nil {
			return cacheEntry{}, fmt.Errorf("identity answered a principal that is not JSON: %w", err)
		}
		if !usable(p) {
			return cacheEntry{}, fmt.Errorf("identity answered a principal of type %q", p.Type)
		}
		now := a.now()
		e := cacheEntry{principal: p, expires: now.Add(a.ttl)}
		if raw := resp.Header.Peek(identityapi.HeaderTokenExpires); len(raw) > 0 {
			exp, err := time.Parse(time.RFC3339Nano, string(raw))
			if err != nil {
				return cacheEntry{}, fmt.Errorf("identity answered a malformed %s: %w", identityapi.HeaderTokenExpires, err)
			}
			left := exp.Sub(now)
			if left <= 0 {
				return refusal(now, a.negTTL), nil
			}
			if left < a.ttl {
				e.expires = now.Add(left)
			}
		}
		return e, nil
	case fasthttp.StatusUnauthorized:
		return refusal(a.now(), a.negTTL), nil
	default:
		return cacheEntry{}, fmt.Errorf("identity answered %d", resp.StatusCode())
	}
}

// readSignIn reads identity's answer about a sign-in with email: a session principal for
// that email, or the refusal. Lifetimes are the caller's to set.
func (a *Identity) readSignIn(resp *fasthttp.Response, email string) (cacheEntry, error) {
	switch resp.StatusCode() {
	case fasthttp.StatusOK:
		var p auth.Principal
		if err := json.Unmarshal(resp.Body(), &p); err != nil {
			return cacheEntry{}, fmt.Errorf("identity answered a principal that is not JSON: %w", err)
		}
		if !signedIn(p, email) {
			return cacheEntry{}, fmt.Errorf("identity answered a sign-in with a principal of type %q", p.Type)
		}
		return cacheEntry{principal: p}, nil
	case fasthttp.StatusUnauthorized:
		return refusal(a.now(), 0), nil
	default:
		return cacheEntry{}, fmt.Errorf("identity answered %d", resp.StatusCode())
	}
}

// signedIn reports whether p is what a sign-in with email may act as: a session of the
// user with that email or, for someone not registered yet, a session with nothing but the
// email (and a name), which holds no rights and has no person behind it yet.
func signedIn(p auth.Principal, email string) bool {
	if p.Type != auth.TypeSession || !strings.EqualFold(p.Email, strings.TrimSpace(email)) || p.TokenID != "" {
		return false
	}
	return p.ID != "" || (len(p.Roles) == 0 && len(p.Teams) == 0 && len(p.Permissions) == 0 && p.Team == "" && p.Workflow == "" &&
		p.Person == "")
}

// remember caches an answer while its lifetime allows.
func (a *Identity) remember(key [sha256.Size]byte, e cacheEntry) {
	if e.err != nil {
		if a.negTTL > 0 {
			a.refused.put(key, e, a.now())
		}
		return
	}
	if a.ttl > 0 {
		a.accepted.put(key, e, a.now())
	}
}

// usable reports whether p is something a credential can authenticate as: never a
// service (only the service key makes those) and never nobody.
func usable(p auth.Principal) bool {
	switch p.Type {
	case auth.TypeUser, auth.TypeSession, auth.TypeTeam, auth.TypeWorkflow, auth.TypeGlobal:
		return p.ID != ""
	}
	return false
}

func refusal(now time.Time, ttl time.Duration) cacheEntry {
	return cacheEntry{err: apperr.New(apperr.Unauthenticated, "The credential is not valid."), expires: now.Add(ttl)}
}

func unavailable(cause error) error {
	return apperr.Wrap(apperr.DependencyUnavailable, cause,
		"The identity service could not check the credential; try again shortly.").WithRetryAfter(time.Second)
}

// cacheEntry is one answer: a principal, or the refusal err.
type cacheEntry struct {
	principal auth.Principal
	err       error
	expires   time.Time
}

// cache maps credential digests to answers, bounded in size.
type cache struct {
	mu      sync.RWMutex
	entries map[[sha256.Size]byte]cacheEntry
	max     int
}

func newCache(max int) *cache {
	return &cache{entries: make(map[[sha256.Size]byte]cacheEntry), max: max}
}

func (c *cache) get(key [sha256.Size]byte, now time.Time) (cacheEntry, bool) {
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok || !now.Before(e.expires) {
		return cacheEntry{}, false
	}
	return e, true
}

func (c *cache) put(key [sha256.Size]byte, e cacheEntry, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		c.sweepLocked(now)
		if len(c.entries) >= c.max {
			// Still full of live entries: drop an eighth of them, whichever the map yields
			// first, so a flood of new credentials costs amortised constant time each.
			target := c.max - max(c.max/8, 1)
			for k := range c.entries {
				if len(c.entries) <= target {
					break
				}
				delete(c.entries, k)
			}
		}
	}
	c.entries[key] = e
}

// remembered checks credential before anyone is asked about it: an empty or oversized one
// is refused, and an answer still in the accepted or refused cache is returned as e. With
// neither, it returns the cache key to ask and remember under.
func remembered(accepted, refused *cache, credential string, now time.Time) (key [sha256.Size]byte, e *cacheEntry, err error) {
	if credential == "" {
		return key, nil, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	if len(credential) > MaxCredentialLength {
		return key, nil, apperr.New(apperr.Unauthenticated, "The credential is not valid.")
	}
	key = sha256.Sum256([]byte(credential))
	if hit, ok := accepted.get(key, now); ok {
		return key, &hit, nil
	}
	if hit, ok := refused.get(key, now); ok {
		return key, &hit, nil
	}
	return key, nil, nil
}

// cachedAnswer turns what remembered found into Authenticate's result.
func cachedAnswer(e *cacheEntry, err error) (auth.Principal, error) {
	if err != nil {
		return auth.Principal{}, err
	}
	if e.err != nil {
		return auth.Principal{}, e.err
	}
	return e.principal, nil
}

func (c *cache) forget(key [sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
}

func (c *cache) sweep(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sweepLocked(now)
}

func (c *cache) sweepLocked(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
}

func (c *cache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}

// headerCarrier lets the OpenTelemetry propagator write trace context into a request.
type headerCarrier struct{ h *fasthttp.RequestHeader }

func (c headerCarrier) Get(key string) string { return string(c.h.Peek(key)) }

func (c headerCarrier) Set(key, value string) { c.h.Set(key, value) }

func (c headerCarrier) Keys() []string {
	var keys []string
	c.h.VisitAll(func(k, _ []byte) { keys = append(keys, string(k)) })
	return keys
}

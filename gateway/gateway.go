// Package gateway is Baton's public entry point for /api/v2: it matches each request
// against the one routing table, authenticates it (unless the route is open) with the
// bootstrap token, a run's callback token, an OIDC issuer's JWT or through the identity
// service, applies the per-client rate limit, the route's coarse authorization and its body
// limit, and proxies it to a healthy instance of the owning service with the caller's
// principal signed into its headers.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/gateway/internal/activation"
	"github.com/baton-flow/baton/gateway/internal/authn"
	"github.com/baton-flow/baton/gateway/internal/openapi"
	"github.com/baton-flow/baton/gateway/internal/proxy"
	"github.com/baton-flow/baton/gateway/internal/ratelimit"
	"github.com/baton-flow/baton/gateway/internal/routes"
	"github.com/baton-flow/baton/gateway/internal/webui"
	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/secrets"
)

// Name is the gateway's unit name.
const Name = "gateway"

// Defaults of Config (API.md §8).
const (
	DefaultRateLimit       = 50.0
	DefaultRateBurst       = 100
	DefaultUpstreamTimeout = proxy.DefaultTimeout
	// DefaultAuthCacheTTL is how long an answer of identity is reused: a revoked token
	// stops working within it.
	DefaultAuthCacheTTL = authn.DefaultCacheTTL
	// DefaultAuthCacheSize bounds the credentials whose answers are kept.
	DefaultAuthCacheSize = authn.DefaultCacheSize
)

const (
	// maxRateLimitKeys bounds the rate limiter's memory (a few MB at most).
	maxRateLimitKeys = 100_000
	// sweepEvery is how often idle rate-limit buckets and upstream clients are dropped.
	sweepEvery = 30 * time.Second
)

// Config is the gateway's own configuration. Zero fields take their defaults.
type Config struct {
	// Addr is where the gateway listens (BATON_GATEWAY_ADDR); empty leaves it to the host's
	// BATON_HTTP_ADDR.
	Addr string
	// RateLimit is the average requests a second one client may send (BATON_RATE_LIMIT,
	// default 50); negative turns rate limiting off.
	RateLimit float64
	// RateBurst is how many requests one client may send at once (BATON_RATE_BURST,
	// default 100).
	RateBurst int
	// UpstreamTimeout bounds each proxied request (BATON_UPSTREAM_TIMEOUT, default 30s);
	// a followed task-run log has no total timeout.
	UpstreamTimeout time.Duration
	// BootstrapToken is the admin token that exists before any other
	// (BATON_BOOTSTRAP_TOKEN); empty means it authenticates nothing.
	BootstrapToken string
	// AuthCacheTTL is how long identity's answer about a credential is reused
	// (BATON_AUTH_CACHE_TTL, default 5s); a revoked or expired token stops working within
	// it. BATON_AUTH_CACHE_TTL=0 asks identity on every request.
	AuthCacheTTL time.Duration
	// AuthCacheSize bounds how many credentials' answers are kept (BATON_AUTH_CACHE_SIZE,
	// default 10000).
	AuthCacheSize int
	// OIDC turns on sign-in with the JWTs of an OpenID Connect issuer when its Issuer is set.
	OIDC OIDCConfig
}

// OIDCConfig is the optional OpenID Connect sign-in: a bearer that is a JWT signed by the
// issuer, for the audience, and not expired acts for the user holding its email.
type OIDCConfig struct {
	// Issuer is the issuer URL, exactly as tokens name it in "iss" (BATON_OIDC_ISSUER);
	// empty turns OIDC sign-in off.
	Issuer string
	// Audience must be among a token's "aud" values, typically the client id Baton is
	// registered under (BATON_OIDC_AUDIENCE; required with an issuer).
	Audience string
	// JWKSURL is where the issuer publishes its signing keys (BATON_OIDC_JWKS_URL); empty
	// discovers it from <Issuer>/.well-known/openid-configuration.
	JWKSURL string
	// EmailClaim names the claim holding the user's email (BATON_OIDC_EMAIL_CLAIM, default
	// email).
	EmailClaim string
	// ClientID is the client id the web UI signs in with at the issuer (BATON_OIDC_CLIENT_ID);
	// empty means Audience. When it differs from Audience, the UI sends the access token the
	// issuer grants it, which must then be a JWT for Audience (see AuthConfig).
	ClientID string
	// Scopes are what the web UI asks the issuer for (BATON_OIDC_SCOPES, space- or
	// comma-separated); empty means DefaultOIDCScopes. They always include openid.
	Scopes []string
}

// LogValue keeps the bootstrap token out of logs.
func (c Config) LogValue() slog.Value {
	token := ""
	if c.BootstrapToken != "" {
		token = secrets.Mask
	}
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.Float64("rateLimit", c.RateLimit),
		slog.Int("rateBurst", c.RateBurst),
		slog.Duration("upstreamTimeout", c.UpstreamTimeout),
		slog.String("bootstrapToken", token),
		slog.Duration("authCacheTTL", c.AuthCacheTTL),
		slog.Int("authCacheSize", c.AuthCacheSize),
		slog.String("oidcIssuer", c.OIDC.Issuer),
		slog.String("oidcAudience", c.OIDC.Audience),
		slog.String("oidcJWKSURL", c.OIDC.JWKSURL),
		slog.String("oidcEmailClaim", c.OIDC.EmailClaim),
		slog.String("oidcClientID", c.OIDC.ClientID),
		slog.String("oidcScopes", strings.Join(c.OIDC.Scopes, " ")),
	)
}

// ConfigFromEnv reads the gateway's variables through getenv. BATON_RATE_LIMIT=0 turns
// rate limiting off.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	get := func(key string) string { return strings.TrimSpace(getenv(key)) }
	cfg := Config{
		Addr:            get("BATON_GATEWAY_ADDR"),
		RateLimit:       DefaultRateLimit,
		RateBurst:       DefaultRateBurst,
		UpstreamTimeout: DefaultUpstreamTimeout,
		// A token is taken exactly as configured: trimming could change a secret.
		BootstrapToken: getenv("BATON_BOOTSTRAP_TOKEN"),
		AuthCacheTTL:   DefaultAuthCacheTTL,
		AuthCacheSize:  DefaultAuthCacheSize,
	}
	if v := get("BATON_RATE_LIMIT"); v != "" {
		rate, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(rate) || math.IsInf(rate, 0) {
			return Config{}, fmt.Errorf("BATON_RATE_LIMIT: %q is not a number of requests a second", v)
		}
		if rate <= 0 {
			rate = -1
		}
		cfg.RateLimit = rate
	}
	if v := get("BATON_RATE_BURST"); v != "" {
		burst, err := strconv.Atoi(v)
		if err != nil || burst < 1 {
			return Config{}, fmt.Errorf("BATON_RATE_BURST: %q is not a positive whole number", v)
		}
		cfg.RateBurst = burst
	}
	if v := get("BATON_UPSTREAM_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("BATON_UPSTREAM_TIMEOUT: %q is not a positive duration such as 30s", v)
		}
		cfg.UpstreamTimeout = d
	}
	if v := get("BATON_AUTH_CACHE_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return Config{}, fmt.Errorf("BATON_AUTH_CACHE_TTL: %q is not a duration such as 5s (0 turns caching off)", v)
		}
		if d == 0 {
			d = -1
		}
		cfg.AuthCacheTTL = d
	}
	if v := get("BATON_AUTH_CACHE_SIZE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Config{}, fmt.Errorf("BATON_AUTH_CACHE_SIZE: %q is not a positive whole number", v)
		}
		cfg.AuthCacheSize = n
	}
	oidc, err := oidcFromEnv(get)
	if err != nil {
		return Config{}, err
	}
	cfg.OIDC = oidc
	return cfg, nil
}

// oidcFromEnv reads the BATON_OIDC_* variables. Any of them without an issuer is refused:
// whoever set them expects sign-in to work.
func oidcFromEnv(get func(string) string) (OIDCConfig, error) {
	cfg := OIDCConfig{
		Issuer:     get("BATON_OIDC_ISSUER"),
		Audience:   get("BATON_OIDC_AUDIENCE"),
		JWKSURL:    get("BATON_OIDC_JWKS_URL"),
		EmailClaim: get("BATON_OIDC_EMAIL_CLAIM"),
		ClientID:   get("BATON_OIDC_CLIENT_ID"),
	}
	scopes := get("BATON_OIDC_SCOPES")
	if cfg.Issuer == "" {
		if cfg.Audience != "" || cfg.JWKSURL != "" || cfg.EmailClaim != "" || cfg.ClientID != "" || scopes != "" {
			return OIDCConfig{}, errors.New("BATON_OIDC_AUDIENCE, BATON_OIDC_JWKS_URL, BATON_OIDC_EMAIL_CLAIM, BATON_OIDC_CLIENT_ID and BATON_OIDC_SCOPES need BATON_OIDC_ISSUER")
		}
		return cfg, nil
	}
	if scopes != "" {
		s, err := parseScopes(scopes)
		if err != nil {
			return OIDCConfig{}, err
		}
		cfg.Scopes = s
	}
	if !webURL(cfg.Issuer) {
		return OIDCConfig{}, fmt.Errorf("BATON_OIDC_ISSUER: %q is not an http(s) URL such as https://login.example.com", cfg.Issuer)
	}
	if cfg.Audience == "" {
		return OIDCConfig{}, errors.New("BATON_OIDC_AUDIENCE is required with BATON_OIDC_ISSUER: the audience (client id) tokens must be meant for")
	}
	if cfg.JWKSURL != "" && !webURL(cfg.JWKSURL) {
		return OIDCConfig{}, fmt.Errorf("BATON_OIDC_JWKS_URL: %q is not an http(s) URL", cfg.JWKSURL)
	}
	if cfg.EmailClaim == "" {
		cfg.EmailClaim = authn.DefaultEmailClaim
	}
	return cfg, nil
}

// webURL reports whether s is an absolute http or https URL with a host.
func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// Authenticator resolves a request's credential to its principal; see New.
type Authenticator = authn.Authenticator

// NewAuthenticator returns what Build authenticates with: the bootstrap token first
// (compared in constant time, and never sent anywhere); then, by the credential's shape,
// runs' callback tokens verified with signer (acting as their run, on the callbacks only),
// JWTs verified with the OIDC issuer when one is configured (and mapped to users by
// identity), and Baton's opaque tokens checked by the identity service, found through
// resolver and asked as the gateway's service principal. Answers are cached as cfg says.
func NewAuthenticator(cfg Config, resolver registry.Resolver, signer *auth.Signer, logger *slog.Logger) (Authenticator, error) {
	identity, err := authn.NewIdentity(authn.IdentityConfig{
		Resolver:  resolver,
		Signer:    signer,
		TTL:       cfg.AuthCacheTTL,
		CacheSize: cfg.AuthCacheSize,
		Logger:    logger,
	})
	if err != nil {
		return nil, err
	}
	chain := authn.Chain{authn.NewBootstrap(cfg.BootstrapToken), authn.NewRunTokens(signer)}
	if cfg.OIDC.Issuer != "" {
		oidc, err := authn.NewOIDC(authn.OIDCConfig{
			Issuer:     cfg.OIDC.Issuer,
			Audience:   cfg.OIDC.Audience,
			JWKSURL:    cfg.OIDC.JWKSURL,
			EmailClaim: cfg.OIDC.EmailClaim,
			Users:      identity,
			TTL:        cfg.AuthCacheTTL,
			CacheSize:  cfg.AuthCacheSize,
			Logger:     logger,
		})
		if err != nil {
			return nil, err
		}
		chain = append(chain, oidc)
	}
	return append(chain, identity), nil
}

// Deps are what the gateway needs from its process.
type Deps struct {
	// Resolver finds healthy instances of the services.
	Resolver registry.Resolver
	// Authenticator checks credentials; nil accepts only Config.BootstrapToken.
	Authenticator Authenticator
	// Signer signs the principal headers services trust.
	Signer *auth.Signer
	// Logger receives upstream failures; slog.Default when nil.
	Logger *slog.Logger
	// Activation keeps a locked installation closed (423 INSTANCE_LOCKED but on open
	// routes); nil lets every request through. Build always sets it.
	Activation interface{ Check(context.Context) error }
}

// Gateway serves /api/v2 by proxying to the owning services.
type Gateway struct {
	table      *routes.Table
	authn      Authenticator
	limiter    *ratelimit.Limiter // nil when rate limiting is off
	proxy      *proxy.Proxy
	activation interface{ Check(context.Context) error } // nil: no activation check
	docs       *openapi.Docs
	ui         *webui.UI
	authConfig *authConfig
}

// New returns a Gateway; Resolver and Signer are required.
func New(cfg Config, deps Deps) (*Gateway, error) {
	if deps.Resolver == nil {
		return nil, errors.New("gateway: Deps.Resolver is required")
	}
	if deps.Signer == nil {
		return nil, errors.New("gateway: Deps.Signer is required")
	}
	if cfg.RateLimit == 0 {
		cfg.RateLimit = DefaultRateLimit
	}
	if cfg.RateBurst == 0 {
		cfg.RateBurst = DefaultRateBurst
	}
	if cfg.UpstreamTimeout == 0 {
		cfg.UpstreamTimeout = DefaultUpstreamTimeout
	}
	if cfg.UpstreamTimeout < 0 || cfg.RateBurst < 0 {
		return nil, errors.New("gateway: UpstreamTimeout and RateBurst must not be negative")
	}
	table, err := routes.New(routes.Declared())
	if err != nil {
		return nil, fmt.Errorf("gateway: routing table: %w", err)
	}
	px, err := proxy.New(proxy.Config{
		Resolver: deps.Resolver,
		Signer:   deps.Signer,
		Timeout:  cfg.UpstreamTimeout,
		Logger:   deps.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	docs, err := openapi.New()
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	ui, err := webui.Default()
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	authConfig, err := newAuthConfig(cfg.OIDC)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if origin := authConfig.issuerOrigin(); origin != "" {
		// The UI fetches the issuer's discovery document and token endpoint from the page.
		if err := ui.AllowConnect(origin); err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
	}
	g := &Gateway{table: table, authn: deps.Authenticator, proxy: px, docs: docs, ui: ui, authConfig: authConfig}
	g.activation = deps.Activation
	if g.authn == nil {
		g.authn = authn.NewBootstrap(cfg.BootstrapToken)
	}
	if cfg.RateLimit > 0 {
		g.limiter = ratelimit.New(cfg.RateLimit, cfg.RateBurst, maxRateLimitKeys)
	}
	return g, nil
}

// Build makes the gateway's unit from a connected platform, for cmd/gateway and the
// standalone launcher. The gateway is not discoverable: nothing inside Baton calls it.
func Build(_ context.Context, p *host.Platform) (host.Unit, error) {
	cfg, err := ConfigFromEnv(p.Env.Getenv)
	if err != nil {
		return host.Unit{}, err
	}
	authenticator, err := NewAuthenticator(cfg, p.Resolver, p.Signer, p.Logger)
	if err != nil {
		return host.Unit{}, err
	}
	locked, err := activation.New(activation.Config{Resolver: p.Resolver, Signer: p.Signer, Logger: p.Logger})
	if err != nil {
		return host.Unit{}, err
	}
	g, err := New(cfg, Deps{Resolver: p.Resolver, Signer: p.Signer, Logger: p.Logger, Authenticator: authenticator, Activation: locked})
	if err != nil {
		return host.Unit{}, err
	}
	return host.Unit{Name: Name, Service: g, Addr: cfg.Addr, BodyLimit: httpx.LargeBodyLimit, HeaderLimit: httpx.HeaderLimit}, nil
}

// Routes registers the gateway's handler for everything under /api/v2. The app must accept
// bodies up to httpx.LargeBodyLimit; each route's own limit is checked here. The API's
// OpenAPI document, its rendering and the sign-in settings (GET /api/v2/auth/config) are the
// gateway's own, ahead of the proxy. The web UI (webui) answers GET and HEAD of every other
// path outside /api/.
func (g *Gateway) Routes(r fiber.Router) {
	r.All(openapi.SpecPath, g.serveDocs(g.docs.ServeSpec))
	r.All(openapi.DocsPath, g.serveDocs(g.docs.ServePage))
	r.All(openapi.AuthConfigPath, g.serveDocs(g.authConfig.serve))
	r.All("/api/v2", g.handle)
	r.All("/api/v2/*", g.handle)
	g.ui.Routes(r)
}

// serveDocs answers one of the gateway's own endpoints (the documentation, the sign-in
// settings): open, even on a locked installation (API.md §2), never proxied, and rate
// limited like anonymous traffic.
// Credentials sent anyway are ignored, as nothing here depends on the caller.
func (g *Gateway) serveDocs(serve fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if c.Method() != fiber.MethodGet && c.Method() != fiber.MethodHead {
			c.Set(fiber.HeaderAllow, "GET, HEAD")
			return apperr.New(apperr.MethodNotAllowed, "Method %s is not allowed on %s.", c.Method(), c.Path())
		}
		if limited := g.limit(g.addrKey(c)); limited != nil {
			return limited
		}
		return serve(c)
	}
}

// Run drops idle rate-limit buckets, upstream clients and expired authentication answers
// until ctx ends. Followed logs end by themselves when the server begins shutting down
// (httpx.Stream).
func (g *Gateway) Run(ctx context.Context) error {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			if g.limiter != nil {
				g.limiter.Sweep(now)
			}
			if s, ok := g.authn.(interface{ Sweep(time.Time) }); ok {
				s.Sweep(now)
			}
			g.proxy.Sweep(now)
		}
	}
}

// handle is the whole request path: match, authenticate, rate limit, authorize, body
// limit, proxy.
func (g *Gateway) handle(c *fiber.Ctx) error {
	route, params, err := g.table.Match(c.Method(), c.Path())
	if err != nil {
		if errors.Is(err, routes.ErrMethodNotAllowed) {
			c.Set(fiber.HeaderAllow, strings.Join(g.table.Allowed(c.Path()), ", "))
			return apperr.New(apperr.MethodNotAllowed, "Method %s is not allowed on %s.", c.Method(), c.Path())
		}
		return apperr.New(apperr.RouteNotFound, "No endpoint %s %s.", c.Method(), c.Path())
	}
	traceRoute(c, route, &params)

	// A locked installation answers 423 to all but the open routes, activation among them.
	if !route.Open && g.activation != nil {
		if err := g.activation.Check(c.UserContext()); err != nil {
			return err
		}
	}

	credential := fiberauth.Credential(c, route.QueryToken)
	// Open endpoints called without credentials still carry a signed principal, the
	// anonymous one, so services know the request came through the gateway.
	principal := &auth.Anonymous
	if credential != "" || !route.Open {
		p, err := g.authn.Authenticate(c.UserContext(), credential)
		if err != nil {
			// Failed attempts count against the caller's address, so guessing tokens is
			// throttled like anonymous traffic.
			if limited := g.limit(g.addrKey(c)); limited != nil {
				return limited
			}
			return err
		}
		principal = &p
	}

	if g.limiter != nil {
		var key uint64
		if credential != "" {
			key = g.limiter.CredentialKey(credential)
		} else {
			key = g.addrKey(c)
		}
		if limited := g.limit(key); limited != nil {
			return limited
		}
	}

	// A verified sign-in nobody is registered for yet has no user to act for: it may only
	// register, which GET /profile does.
	if principal.Type == auth.TypeSession && principal.ID == "" && !route.SignUp {
		return apperr.New(apperr.PermissionDenied, "This sign-in has no user yet: GET /api/v2/profile registers it.")
	}

	// After the rate limit, so refused requests are throttled too.
	if err := route.Authorize(principal, &params); err != nil {
		return err
	}

	if len(c.Request().Body()) > route.BodyLimit {
		return apperr.New(apperr.RequestTooLarge, "The request body is larger than %d bytes.", route.BodyLimit)
	}
	// Every service stores parts of bodies as they came (specs, params, annotations); what
	// nests too deeply for other parsers to read back is refused here, once for all.
	if body := c.Request().Body(); len(body) > 0 && httpx.IsJSON(c.Get(fiber.HeaderContentType)) {
		if err := httpx.CheckDepth(body); err != nil {
			return err
		}
	}
	if err := g.proxy.Forward(c, route, &params, principal); err != nil {
		return err
	}
	if route.ChangesMembership && credential != "" && c.Response().StatusCode() < 300 {
		if f, ok := g.authn.(authn.Forgetter); ok {
			f.Forget(credential)
		}
	}
	return nil
}

func (g *Gateway) addrKey(c *fiber.Ctx) uint64 {
	if g.limiter == nil {
		return 0
	}
	return g.limiter.AddrKey(c.IP())
}

// limit takes a token from key's bucket; it returns the 429 to answer when there is none.
func (g *Gateway) limit(key uint64) error {
	if g.limiter == nil {
		return nil
	}
	ok, wait := g.limiter.Allow(key, time.Now())
	if ok {
		return nil
	}
	return apperr.New(apperr.RateLimited, "Too many requests; retry in %d s.", int(math.Ceil(wait.Seconds()))).
		WithRetryAfter(wait)
}

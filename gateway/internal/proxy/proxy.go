// Package proxy forwards a gateway request to an instance of the service that owns it:
// pooled keep-alive connections per instance, round robin across instances, a retry on
// another instance when a connection fails, one deadline per request, and upstream failures
// answered in the contract's error shape (502, 503, 504).
package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel"

	"github.com/baton-flow/baton/gateway/internal/routes"
	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/registry"
)

// Defaults of Config.
const (
	DefaultTimeout             = 30 * time.Second
	DefaultMaxConnsPerInstance = 512
)

const (
	// maxAttempts bounds the instances one request tries.
	maxAttempts = 3
	// idleClientAfter is how long an instance's client may go unused before Sweep closes it;
	// instances come and go with deployments.
	idleClientAfter = 10 * time.Minute
	// maxErrorBody bounds an error answered to a followed log.
	maxErrorBody = 1 << 20
)

// Config shapes a Proxy.
type Config struct {
	// Resolver finds the instances of a service.
	Resolver registry.Resolver
	// Signer signs the principal headers sent upstream.
	Signer *auth.Signer
	// Timeout bounds a request from the first attempt to the last response byte;
	// DefaultTimeout when zero. A followed stream has none once its head has come.
	Timeout time.Duration
	// MaxConnsPerInstance bounds the connections to one instance;
	// DefaultMaxConnsPerInstance when zero.
	MaxConnsPerInstance int
	// Logger receives upstream failures; slog.Default when nil.
	Logger *slog.Logger
}

// Proxy forwards requests upstream. It is safe for concurrent use.
type Proxy struct {
	resolver   registry.Resolver
	principals *principalCache
	timeout    time.Duration
	maxConns   int
	log        *slog.Logger

	mu        sync.RWMutex
	upstreams map[string]*upstream      // by base URL
	next      map[string]*atomic.Uint64 // round-robin position by service
	// streamer reads followed logs.
	streamer *http.Client
}

// upstream is one instance and its connection pool.
type upstream struct {
	client   *fasthttp.HostClient
	origin   string // scheme://host[:port] plus any path prefix of the base URL
	lastUsed atomic.Int64
}

// New returns a Proxy.
func New(cfg Config) (*Proxy, error) {
	if cfg.Resolver == nil {
		return nil, errors.New("proxy: a resolver is required")
	}
	if cfg.Signer == nil {
		return nil, errors.New("proxy: a signer is required")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxConnsPerInstance == 0 {
		cfg.MaxConnsPerInstance = DefaultMaxConnsPerInstance
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Proxy{
		resolver:   cfg.Resolver,
		principals: newPrincipalCache(cfg.Signer),
		timeout:    cfg.Timeout,
		maxConns:   cfg.MaxConnsPerInstance,
		log:        cfg.Logger,
		upstreams:  map[string]*upstream{},
		next:       map[string]*atomic.Uint64{},
		streamer: &http.Client{
			Transport: &http.Transport{
				DialContext: (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
				// A stream holds its connection to its end.
				DisableKeepAlives:      true,
				DisableCompression:     true,
				ResponseHeaderTimeout:  cfg.Timeout,
				MaxResponseHeaderBytes: 16 << 10,
			},
			// Answers pass as they are, redirects included.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}, nil
}

// Forward sends the request in c, which matched route with params, to an instance of the
// route's service and copies the answer into c. principal, when not nil, travels in the
// signed principal headers. Failures return *apperr.Error values for the app's error handler.
func (p *Proxy) Forward(c *fiber.Ctx, route *routes.Route, params *routes.Params, principal *auth.Principal) error {
	instances, err := p.resolver.Resolve(c.UserContext(), route.Service)
	if err != nil || len(instances) == 0 {
		return apperr.Wrap(apperr.UpstreamUnavailable, err, "No instance of the %s service is available.", route.Service)
	}

	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	if err := p.prepare(c, req, route, principal); err != nil {
		return err
	}

	// A followed log stays open as long as the task runs, a feed as long as what it
	// follows: each is read as it comes. The service reads follow as strconv.ParseBool does.
	if follow, _ := strconv.ParseBool(string(c.Request().URI().QueryArgs().Peek("follow"))); (follow || route.Feed) &&
		route.Streaming && c.Method() == fiber.MethodGet {
		return p.follow(c, req, route, params, instances)
	}
	now := time.Now()
	deadline := now.Add(p.timeout)
	if route.LongPoll {
		deadline = deadline.Add(routes.LongPollWait)
	}

	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(resp)

	buf := uriPool.Get().(*[]byte)
	defer uriPool.Put(buf)

	start := int(p.counter(route.Service).Add(1))
	attempts := min(len(instances), maxAttempts)
	for i := range attempts {
		base := instances[(start+i)%len(instances)]
		up, err := p.upstream(base, now)
		if err != nil {
			return apperr.Wrap(apperr.UpstreamUnavailable, err, "No instance of the %s service is available.", route.Service)
		}
		*buf = appendUpstreamURI((*buf)[:0], up, c, route, params)
		req.SetRequestURIBytes(*buf)
		req.URI().DisablePathNormalizing = true

		err = up.client.DoDeadline(req, resp, deadline)
		if err == nil {
			respond(c, resp)
			return nil
		}
		if err := p.failed(c, route, base, i, attempts, err, req); err != nil {
			return err
		}
	}
	// Unreachable: the loop runs at least once and returns on its last attempt.
	return apperr.New(apperr.UpstreamUnavailable, "No instance of the %s service is available.", route.Service)
}

// appendUpstreamURI appends to dst the URI of c's request at instance up.
func appendUpstreamURI(dst []byte, up *upstream, c *fiber.Ctx, route *routes.Route, params *routes.Params) []byte {
	dst = append(dst, up.origin...)
	dst = route.AppendUpstreamPath(dst, c.Path(), params)
	if q := c.Request().URI().QueryString(); len(q) > 0 {
		dst = append(dst, '?')
		dst = append(dst, q...)
	}
	return dst
}

// failed logs attempt i of attempts at instance base, which failed with err, and answers
// the error to return, or nil when another instance may be tried.
func (p *Proxy) failed(c *fiber.Ctx, route *routes.Route, base string, i, attempts int, err error, req *fasthttp.Request) error {
	failure := classify(err)
	p.log.LogAttrs(c.UserContext(), slog.LevelWarn, "upstream request failed",
		slog.String("service", route.Service),
		slog.String("instance", base),
		slog.String("method", c.Method()),
		slog.String("uri", httpx.RedactedURI(c.Path(), c.Request().URI().QueryString())),
		slog.String("error", err.Error()),
		slog.Int("attempt", i+1))
	if !failure.retry(req) || i == attempts-1 {
		return apperr.Wrap(failure.reason, err, failure.message, route.Service)
	}
	return nil
}

// follow forwards a followed log, prepared in req, and passes the answer on as it comes
// (httpx.Stream). It is read with net/http, whose body read ends when the request's
// context does and tells a body cut short from one that ended: the upstream request ends
// when the client leaves or the gateway shuts down, and a stream the instance cut short
// reaches the client cut short. The answer's head must come within the timeout; the stream
// has none.
func (p *Proxy) follow(c *fiber.Ctx, req *fasthttp.Request, route *routes.Route, params *routes.Params, instances []string) error {
	start := int(p.counter(route.Service).Add(1))
	attempts := min(len(instances), maxAttempts)
	var uri []byte
	for i := range attempts {
		base := instances[(start+i)%len(instances)]
		up, err := p.upstream(base, time.Now())
		if err != nil {
			return apperr.Wrap(apperr.UpstreamUnavailable, err, "No instance of the %s service is available.", route.Service)
		}
		uri = appendUpstreamURI(uri[:0], up, c, route, params)
		ctx, cancel := context.WithCancel(context.WithoutCancel(c.UserContext()))
		hreq, err := http.NewRequestWithContext(ctx, c.Method(), string(uri), nil)
		if err != nil {
			cancel()
			return apperr.Wrap(apperr.Internal, err, "An internal error occurred.")
		}
		req.Header.VisitAll(func(k, v []byte) {
			switch string(k) {
			case fiber.HeaderHost, fiber.HeaderContentLength:
			default:
				hreq.Header.Add(string(k), string(v))
			}
		})
		res, err := p.streamer.Do(hreq)
		if err != nil {
			cancel()
			if err := p.failed(c, route, base, i, attempts, err, req); err != nil {
				return err
			}
			continue
		}
		out := c.Response()
		out.SetStatusCode(res.StatusCode)
		for k, vs := range res.Header {
			if !skipResponseHeader([]byte(k)) {
				for _, v := range vs {
					out.Header.Add(k, v)
				}
			}
		}
		if res.StatusCode >= 300 {
			// Errors are whole answers, bounded like any other.
			body, err := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
			_ = res.Body.Close()
			cancel()
			if err != nil {
				return apperr.Wrap(apperr.UpstreamUnreachable, err, "The connection to the %s service failed.", route.Service)
			}
			out.SetBody(body)
			return nil
		}
		httpx.Stream(c, func(sctx context.Context, w io.Writer) error {
			stop := context.AfterFunc(sctx, cancel)
			defer stop()
			defer cancel()
			defer res.Body.Close()
			if _, err := io.Copy(w, res.Body); err != nil {
				p.log.Debug("stream ended early", "route", route.Pattern, "error", err.Error())
				return err
			}
			return nil
		})
		return nil
	}
	// Unreachable: the loop runs at least once and returns on its last attempt.
	return apperr.New(apperr.UpstreamUnavailable, "No instance of the %s service is available.", route.Service)
}

// prepare fills req from the client's request: headers minus the hop-by-hop ones and any
// principal a client tried to send, the forwarding headers, request ID, trace context and
// the signed principal.
func (p *Proxy) prepare(c *fiber.Ctx, req *fasthttp.Request, route *routes.Route, principal *auth.Principal) error {
	in := c.Request()
	in.Header.CopyTo(&req.Header)
	removeHopHeaders(&req.Header)
	req.Header.Del(auth.HeaderPrincipal)
	req.Header.Del(auth.HeaderSignature)
	req.Header.SetMethod(route.UpstreamMethod(c.Method()))
	// The body stays owned by the client's request, which outlives this call.
	req.SetBodyRaw(in.Body())

	ip := c.IP()
	if prior := req.Header.Peek(fiber.HeaderXForwardedFor); len(prior) > 0 {
		req.Header.Set(fiber.HeaderXForwardedFor, string(prior)+", "+ip)
	} else {
		req.Header.Set(fiber.HeaderXForwardedFor, ip)
	}
	req.Header.Set(fiber.HeaderXForwardedProto, c.Protocol())
	req.Header.Set(fiber.HeaderXForwardedHost, c.Hostname())
	if id, ok := c.Locals("requestid").(string); ok && id != "" {
		req.Header.Set(httpx.HeaderRequestID, id)
	}
	otel.GetTextMapPropagator().Inject(c.UserContext(), headerCarrier{&req.Header})

	if principal != nil {
		if err := p.principals.setHeaders(principal, req.Header.Set); err != nil {
			return apperr.Wrap(apperr.Internal, err, "An internal error occurred.")
		}
	}
	return nil
}

// respond copies a buffered resp into the client's response. Headers the gateway set
// itself (the request ID) stay; hop-by-hop headers do not pass.
func respond(c *fiber.Ctx, resp *fasthttp.Response) {
	out := c.Response()
	out.SetStatusCode(resp.StatusCode())
	resp.Header.VisitAll(func(k, v []byte) {
		if !skipResponseHeader(k) {
			out.Header.AddBytesKV(k, v)
		}
	})
	out.SetBody(resp.Body())
}

var uriPool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// counter returns the round-robin position of service.
func (p *Proxy) counter(service string) *atomic.Uint64 {
	p.mu.RLock()
	n := p.next[service]
	p.mu.RUnlock()
	if n != nil {
		return n
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if n = p.next[service]; n == nil {
		n = &atomic.Uint64{}
		p.next[service] = n
	}
	return n
}

// upstream returns the client of the instance at base, creating it on first use.
func (p *Proxy) upstream(base string, now time.Time) (*upstream, error) {
	p.mu.RLock()
	u := p.upstreams[base]
	p.mu.RUnlock()
	if u == nil {
		var err error
		if u, err = p.addUpstream(base); err != nil {
			return nil, err
		}
	}
	u.lastUsed.Store(now.UnixNano())
	return u, nil
}

func (p *Proxy) addUpstream(base string) (*upstream, error) {
	parsed, err := url.Parse(base)
	if err != nil || parsed.Host == "" || (parsed.Scheme != "http" && parsed.Scheme != "https") {
		return nil, fmt.Errorf("instance base URL %q is not an http(s) URL", base)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if u := p.upstreams[base]; u != nil {
		return u, nil
	}
	addr := parsed.Host
	if parsed.Port() == "" {
		addr += map[string]string{"http": ":80", "https": ":443"}[parsed.Scheme]
	}
	u := &upstream{
		origin: parsed.Scheme + "://" + parsed.Host + strings.TrimSuffix(parsed.EscapedPath(), "/"),
		client: &fasthttp.HostClient{
			Addr:                     addr,
			IsTLS:                    parsed.Scheme == "https",
			MaxConns:                 p.maxConns,
			MaxConnWaitTimeout:       time.Second,
			MaxIdleConnDuration:      30 * time.Second,
			NoDefaultUserAgentHeader: true,
			DisablePathNormalizing:   true,
			// Service answers may carry large headers (Location, Content-Disposition, links).
			ReadBufferSize: 16 << 10,
			// One more attempt on the same instance covers a pooled connection the instance
			// closed meanwhile; other failures move on to the next instance.
			MaxIdemponentCallAttempts: 2,
			RetryIf:                   idempotent,
		},
	}
	p.upstreams[base] = u
	return u, nil
}

// Sweep closes the clients of instances unused for a while.
func (p *Proxy) Sweep(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for base, u := range p.upstreams {
		if now.Sub(time.Unix(0, u.lastUsed.Load())) > idleClientAfter {
			u.client.CloseIdleConnections()
			delete(p.upstreams, base)
		}
	}
}

func idempotent(req *fasthttp.Request) bool {
	switch string(req.Header.Method()) {
	case "GET", "HEAD", "PUT", "DELETE", "OPTIONS":
		return true
	}
	return false
}

// failure is how an upstream error is answered and whether another instance may be tried.
type failure struct {
	reason  apperr.Reason
	message string
	// sent is false when the request never left the gateway.
	sent bool
}

func (f failure) retry(req *fasthttp.Request) bool {
	if f.reason == apperr.UpstreamTimeout {
		// The deadline covers all attempts, so nothing is left for another one.
		return false
	}
	// A request that was never sent can go anywhere; one that may have been processed is
	// repeated only when repeating it is harmless.
	return !f.sent || idempotent(req)
}

func classify(err error) failure {
	var op *net.OpError
	switch {
	case errors.Is(err, fasthttp.ErrDialTimeout), errors.As(err, &op) && op.Op == "dial":
		return failure{reason: apperr.UpstreamUnreachable, message: "The %s service could not be reached."}
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		return failure{reason: apperr.UpstreamUnavailable, message: "The %s service is too busy to take the request."}
	case errors.Is(err, fasthttp.ErrTimeout) || isTimeout(err):
		return failure{reason: apperr.UpstreamTimeout, message: "The %s service did not answer in time.", sent: true}
	default:
		return failure{reason: apperr.UpstreamUnreachable, message: "The connection to the %s service failed.", sent: true}
	}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// hopHeaders are meaningful for one connection only (RFC 9110 §7.6.1), plus Expect, which
// the gateway has already answered.
var hopHeaders = []string{
	"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Expect",
}

func removeHopHeaders(h *fasthttp.RequestHeader) {
	// Headers named by Connection are hop-by-hop too.
	if conn := h.Peek(fiber.HeaderConnection); len(conn) > 0 {
		for _, name := range strings.Split(string(conn), ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

// skipResponseHeader reports whether an upstream response header stays behind: hop-by-hop
// headers, those the gateway's server writes itself, and the request ID the gateway has
// already set.
func skipResponseHeader(k []byte) bool {
	switch string(k) {
	case "Content-Length", "Date", "X-Request-Id", "X-Request-ID":
		return true
	}
	for _, name := range hopHeaders {
		if strings.EqualFold(string(k), name) {
			return true
		}
	}
	return false
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

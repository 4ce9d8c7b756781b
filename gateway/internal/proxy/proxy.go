// Package proxy forwards a gateway request to an instance of the service that owns it:
// pooled keep-alive connections per instance, round robin across instances, a retry on
// another instance when a connection fails, one deadline per request, and upstream failures
// answered in the contract's error shape (502, 503, 504).
package proxy

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
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
	// streamWriteIdle bounds each write of a streamed response to the client; a followed log
	// as a whole has no time limit.
	streamWriteIdle = time.Minute
)

// Config shapes a Proxy.
type Config struct {
	// Resolver finds the instances of a service.
	Resolver registry.Resolver
	// Signer signs the principal headers sent upstream.
	Signer *auth.Signer
	// Timeout bounds a request from the first attempt to the last response byte;
	// DefaultTimeout when zero. A followed stream has none.
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
	streams   sync.Map                  // client connections of open log streams
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

	// A followed log stays open as long as the task runs, so it has no total timeout.
	follow := route.Streaming && c.Method() == fiber.MethodGet &&
		string(c.Request().URI().QueryArgs().Peek("follow")) == "true"
	now := time.Now()
	var deadline time.Time
	if follow {
		// A stream the client abandons leaves unread bytes on the connection, so it must not
		// go back to the pool.
		req.SetConnectionClose()
	} else {
		deadline = now.Add(p.timeout)
	}

	resp := fasthttp.AcquireResponse()
	handedOff := false
	defer func() {
		// A stream owns the response once handed off and releases it when done.
		if !handedOff {
			fasthttp.ReleaseResponse(resp)
		}
	}()

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
		*buf = append((*buf)[:0], up.origin...)
		*buf = route.AppendUpstreamPath(*buf, c.Path(), params)
		if q := c.Request().URI().QueryString(); len(q) > 0 {
			*buf = append(*buf, '?')
			*buf = append(*buf, q...)
		}
		req.SetRequestURIBytes(*buf)
		req.URI().DisablePathNormalizing = true
		resp.StreamBody = follow

		if deadline.IsZero() {
			err = up.client.Do(req, resp)
		} else {
			err = up.client.DoDeadline(req, resp, deadline)
		}
		if err == nil {
			if follow && resp.IsBodyStream() && resp.StatusCode() < 300 {
				handedOff = true
				p.stream(c, resp)
				return nil
			}
			respond(c, resp)
			return nil
		}

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

// stream passes a streamed upstream answer to the client as it arrives, on the hijacked
// client connection. A response body stream handed to Fiber would not do: the tracing
// middleware of every httpx app reads a response body whole to measure it. The connection
// closes when the stream ends; resp is released then.
func (p *Proxy) stream(c *fiber.Ctx, resp *fasthttp.Response) {
	chunked := c.Request().Header.IsHTTP11()
	head := make([]byte, 0, 512)
	head = fmt.Appendf(head, "HTTP/1.1 %d %s\r\n", resp.StatusCode(), fasthttp.StatusMessage(resp.StatusCode()))
	if id := c.Response().Header.Peek(httpx.HeaderRequestID); len(id) > 0 {
		head = appendHeader(head, []byte(httpx.HeaderRequestID), id)
	}
	resp.Header.VisitAll(func(k, v []byte) {
		if !skipResponseHeader(k) {
			head = appendHeader(head, k, v)
		}
	})
	if chunked {
		head = append(head, "Transfer-Encoding: chunked\r\n"...)
	}
	head = append(head, "Connection: close\r\n\r\n"...)

	// Status for the app's logs and metrics; the response itself is written below.
	c.Status(resp.StatusCode())
	c.Context().HijackSetNoResponse(true)
	c.Context().Hijack(func(conn net.Conn) {
		p.streams.Store(conn, struct{}{})
		defer p.streams.Delete(conn)
		defer func() {
			_ = resp.CloseBodyStream()
			fasthttp.ReleaseResponse(resp)
		}()
		if err := copyStream(conn, head, resp.BodyStream(), chunked); err != nil {
			p.log.Debug("log stream ended early", "error", err.Error())
		}
	})
}

// copyStream writes head, then body as it arrives, each write with its own deadline: a
// follow has no total one.
func copyStream(conn net.Conn, head []byte, body io.Reader, chunked bool) error {
	write := func(b []byte) error {
		if err := conn.SetWriteDeadline(time.Now().Add(streamWriteIdle)); err != nil {
			return err
		}
		_, err := conn.Write(b)
		return err
	}
	if err := write(head); err != nil {
		return err
	}
	buf := make([]byte, 32<<10)
	// Room for a chunk's size line ahead of the data and its CRLF after it.
	const prefix = 10
	for {
		n, rerr := body.Read(buf[prefix : len(buf)-2])
		if n > 0 {
			out := buf[prefix : prefix+n]
			if chunked {
				size := strconv.AppendInt(nil, int64(n), 16)
				size = append(size, '\r', '\n')
				start := prefix - len(size)
				copy(buf[start:], size)
				out = append(buf[start:prefix+n], '\r', '\n')
			}
			if err := write(out); err != nil {
				return err
			}
		}
		if errors.Is(rerr, io.EOF) {
			if chunked {
				return write([]byte("0\r\n\r\n"))
			}
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

func appendHeader(dst, k, v []byte) []byte {
	dst = append(dst, k...)
	dst = append(dst, ':', ' ')
	dst = append(dst, v...)
	return append(dst, '\r', '\n')
}

// CloseStreams ends the log streams still open, for shutdown: the server's graceful drain
// does not see hijacked connections.
func (p *Proxy) CloseStreams() {
	p.streams.Range(func(conn, _ any) bool {
		_ = conn.(net.Conn).Close()
		return true
	})
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

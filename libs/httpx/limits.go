package httpx

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/jsondepth"
)

// Bounds of the request line, headers and body structure (API.md §8).
const (
	// HeaderLimit bounds a request's line and headers together at the public edge: beyond
	// it the gateway answers 431. A request URI longer than half of it answers 414.
	HeaderLimit = 16 << 10
	// UpstreamHeaderLimit is the same bound inside: what the gateway admits plus the signed
	// principal and tracing headers it adds, so a request it forwards always fits.
	UpstreamHeaderLimit = 2 * HeaderLimit
	// MaxDepth bounds how deeply arrays and objects nest in a request body. Stored values
	// (task specs, params, annotations) must stay readable by any JSON parser, and 64
	// levels are far more than any workflow needs.
	MaxDepth = 64
)

// readErrorHandler answers the requests fasthttp could not read (too long, malformed, too
// slow) in the contract's shape, through the app's error handler. Fiber's own translation
// turns some of them into statuses the catalogue does not know, which would leave as 500.
// No middleware ran for them, so the answer's trace is started here, and its path is the
// one the request line names, when the part of the head fasthttp quotes holds it.
func readErrorHandler(app *fiber.App, handler fiber.ErrorHandler, tracer trace.Tracer, headerLimit int) func(*fasthttp.RequestCtx, error) {
	return func(fctx *fasthttp.RequestCtx, err error) {
		method, path, ok := requestLine(err)
		if ok {
			fctx.Request.Header.SetMethod(method)
			fctx.Request.SetRequestURI(path)
		}
		c := app.AcquireCtx(fctx)
		defer app.ReleaseCtx(c)
		ctx, span := tracer.Start(context.Background(), "HTTP "+c.Method()+" (unread)",
			trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		c.SetUserContext(ctx)
		e := readError(err, headerLimit)
		span.SetStatus(codes.Error, e.Message)
		_ = handler(c, e)
	}
}

// tracerName names the spans httpx starts itself.
const tracerName = "github.com/baton-flow/baton/libs/httpx"

// requestLine recovers the method and path of a request fasthttp could not read from the
// error it gave: fasthttp forgets the request line of a head that does not fit its buffer,
// but quotes the head's first 200 bytes in its message ("… contents: \"GET /path?…\"…").
// ok is false when the message quotes nothing, or the path does not end within the quote.
func requestLine(err error) (method, path string, ok bool) {
	_, quoted, found := strings.Cut(err.Error(), "contents: ")
	if !found {
		return "", "", false
	}
	prefix, qerr := strconv.QuotedPrefix(quoted)
	if qerr != nil {
		return "", "", false
	}
	head, qerr := strconv.Unquote(prefix)
	if qerr != nil {
		return "", "", false
	}
	method, rest, found := strings.Cut(head, " ")
	if !found || method == "" || strings.ContainsAny(method, "\r\n") {
		return "", "", false
	}
	end := strings.IndexAny(rest, "? \r\n")
	if end <= 0 || rest[0] != '/' {
		return "", "", false
	}
	return method, rest[:end], true
}

// readError classifies an error fasthttp met reading a request.
func readError(err error, headerLimit int) *apperr.Error {
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	switch {
	case errors.As(err, &small):
		// fasthttp forgets the request line when the head does not fit, so a URI longer
		// than the whole limit is told apart from long headers by nothing: both are 431.
		return apperr.Wrap(apperr.RequestHeadersTooLarge, err, "The request line and headers together are larger than %d bytes.", headerLimit)
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return apperr.Wrap(apperr.RequestTooLarge, err, "The request body is too large.")
	case errors.As(err, &netErr) && netErr.Timeout():
		return apperr.Wrap(apperr.RequestTimeout, err, "The request was not received in time.")
	default:
		return apperr.Wrap(apperr.RequestInvalid, err, "The request is not valid HTTP/1.1.")
	}
}

// uriLimit answers 414 to a request whose URI is longer than limit bytes.
func uriLimit(limit int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if n := len(c.Request().Header.RequestURI()); n > limit {
			return apperr.New(apperr.RequestURITooLong, "The request URI is %d bytes long; at most %d are accepted.", n, limit)
		}
		return c.Next()
	}
}

// CheckDepth refuses (400) a JSON body whose arrays and objects nest deeper than MaxDepth
// (jsondepth.Exceeds: cheap enough for every request; what is not JSON at all is the
// decoder's to refuse).
func CheckDepth(body []byte) error {
	if jsondepth.Exceeds(body, MaxDepth) {
		return apperr.New(apperr.RequestInvalid, "The request body nests arrays and objects deeper than %d levels.", MaxDepth)
	}
	return nil
}

// IsJSON reports whether a request with this Content-Type carries JSON, the default of
// the API when none is given.
func IsJSON(contentType string) bool {
	ct := strings.ToLower(contentType)
	return ct == "" || strings.Contains(ct, "json")
}

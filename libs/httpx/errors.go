package httpx

import (
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/libs/apperr"
)

// ErrorBody is the contract's error body, written for every non-2xx answer.
type ErrorBody struct {
	Timestamp string              `json:"timestamp"`
	Status    int                 `json:"status"`
	Error     string              `json:"error"`
	Code      int                 `json:"code"`
	Reason    string              `json:"reason"`
	Message   string              `json:"message"`
	Path      string              `json:"path"`
	TraceID   string              `json:"traceId,omitempty"`
	Errors    []apperr.FieldError `json:"errors,omitempty"`
}

// fiberReasons maps the errors Fiber itself raises (routing, body limits, bad requests) to
// catalogue reasons, so they leave in the contract's shape like every other error.
var fiberReasons = map[int]apperr.Reason{
	http.StatusBadRequest:                  apperr.RequestInvalid,
	http.StatusRequestTimeout:              apperr.RequestTimeout,
	http.StatusRequestURITooLong:           apperr.RequestURITooLong,
	http.StatusRequestHeaderFieldsTooLarge: apperr.RequestHeadersTooLarge,
	http.StatusNotFound:                    apperr.RouteNotFound,
	http.StatusMethodNotAllowed:            apperr.MethodNotAllowed,
	http.StatusRequestEntityTooLarge:       apperr.RequestTooLarge,
	http.StatusUnsupportedMediaType:        apperr.UnsupportedMediaType,
	http.StatusTooManyRequests:             apperr.RateLimited,
	http.StatusServiceUnavailable:          apperr.DependencyUnavailable,
}

// Classify turns any error into an *apperr.Error: Baton errors pass through, Fiber's own
// errors get their catalogue reason, and everything else becomes an internal error whose
// cause is kept for the log but never shown.
func Classify(err error) *apperr.Error {
	if e, ok := apperr.As(err); ok {
		return e
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		if r, ok := fiberReasons[fe.Code]; ok {
			return apperr.Wrap(r, err, "%s", fe.Message)
		}
	}
	return apperr.Wrap(apperr.Internal, err, "An internal error occurred.")
}

// NewErrorBody builds the error body for e answering a request for path.
func NewErrorBody(e *apperr.Error, path, traceID string) ErrorBody {
	status := e.Reason.Kind.HTTPStatus()
	return ErrorBody{
		Timestamp: time.Now().UTC().Format(TimeFormat),
		Status:    status,
		Error:     http.StatusText(status),
		Code:      e.Reason.Code,
		Reason:    e.Reason.Name,
		Message:   e.Message,
		Path:      path,
		TraceID:   traceID,
		Errors:    e.Fields,
	}
}

// TimeFormat is RFC 3339 in UTC with milliseconds, the contract's format for times in bodies.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// WriteError answers the request with err in the contract's shape.
func WriteError(c *fiber.Ctx, err error) error {
	e := Classify(err)
	body := NewErrorBody(e, c.Path(), TraceID(c))
	if e.RetryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	return c.Status(body.Status).JSON(body)
}

// TraceID returns the trace ID of the request's span, if it is traced.
func TraceID(c *fiber.Ctx) string {
	sc := trace.SpanContextFromContext(c.UserContext())
	if sc.HasTraceID() {
		return sc.TraceID().String()
	}
	return ""
}

// ErrorHandler is the one Fiber error handler of every Baton app. Internal errors are logged
// with their cause; client errors are not, since they are the caller's to fix.
func ErrorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		e := Classify(err)
		if e.Reason.Kind == apperr.KindInternal || e.Reason.Kind == apperr.KindUnavailable {
			log.ErrorContext(c.UserContext(), "request failed",
				"method", c.Method(), "path", c.Path(), "error", err.Error())
		}
		return WriteError(c, e)
	}
}

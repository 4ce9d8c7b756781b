package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error is a non-2xx answer of the API: the contract's error body (API.md §1) with the
// answer's status and headers. Every error the API answers is one; use errors.As, or the
// helpers IsNotFound, HasReason and the like.
type Error struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Reason is the catalogue's reason, e.g. "WORKFLOW_NOT_FOUND"; empty when the answer
	// had no error body (a proxy in front of Baton answered).
	Reason string
	// Code is the catalogue's number of Reason, e.g. 1207.
	Code int
	// Message is for people; do not parse it.
	Message string
	// Path is the request's path as the server saw it.
	Path string
	// TraceID names the request's trace, for support.
	TraceID string
	// RequestID is the X-Request-ID the gateway answered with.
	RequestID string
	// Fields are the fields a validation failure names.
	Fields []FieldError
	// RetryAfter is how long a 429 or 503 asks to wait before trying again (0: not said).
	RetryAfter time.Duration
	// Method is the request's method.
	Method string
}

// FieldError is one invalid field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// errorBody is the contract's ErrorBody.
type errorBody struct {
	Status  int          `json:"status"`
	Code    int          `json:"code"`
	Reason  string       `json:"reason"`
	Message string       `json:"message"`
	Path    string       `json:"path"`
	TraceID string       `json:"traceId"`
	Errors  []FieldError `json:"errors"`
}

// LoginHint is added to the message of a 401: how to give the client credentials.
const LoginHint = "log in with `baton login --server URL --token TOKEN`, or set BATON_TOKEN to a valid token"

// newError reads resp's error body into an *Error.
func newError(method, path string, resp *http.Response) *Error {
	e := &Error{StatusCode: resp.StatusCode, Method: method, Path: path,
		RequestID: resp.Header.Get("X-Request-Id")}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		} else if t, err := http.ParseTime(s); err == nil {
			e.RetryAfter = max(time.Until(t), 0)
		}
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var body errorBody
	if json.Unmarshal(raw, &body) == nil && body.Reason != "" {
		e.Reason, e.Code, e.Message, e.TraceID, e.Fields = body.Reason, body.Code, body.Message, body.TraceID, body.Errors
		if body.Path != "" {
			e.Path = body.Path
		}
	} else {
		e.Message = strings.TrimSpace(string(raw))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200] + "…"
		}
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
	}
	if e.StatusCode == http.StatusUnauthorized {
		e.Message = strings.TrimSuffix(e.Message, ".") + ": " + LoginHint + "."
	}
	return e
}

// Error reads "<status> <reason>: <message>", with the trace id when there is one.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "baton: %s %s: %d", e.Method, e.Path, e.StatusCode)
	if e.Reason != "" {
		b.WriteString(" " + e.Reason)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	for _, f := range e.Fields {
		fmt.Fprintf(&b, "; %s: %s", f.Field, f.Message)
	}
	if e.TraceID != "" {
		b.WriteString(" (trace " + e.TraceID + ")")
	}
	return b.String()
}

// AsError answers err's *Error, if it is or wraps one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// HasReason reports whether err is an API error with the catalogue reason reason (e.g.
// "WORKFLOW_NOT_FOUND").
func HasReason(err error, reason string) bool {
	e, ok := AsError(err)
	return ok && e.Reason == reason
}

// HasStatus reports whether err is an API error with HTTP status code.
func HasStatus(err error, code int) bool {
	e, ok := AsError(err)
	return ok && e.StatusCode == code
}

// IsNotFound reports whether err is a 404: an unknown team, workflow, run, task run…
func IsNotFound(err error) bool { return HasStatus(err, http.StatusNotFound) }

// IsUnauthorized reports whether err is a 401: credentials missing, bad, expired or revoked.
func IsUnauthorized(err error) bool { return HasStatus(err, http.StatusUnauthorized) }

// IsForbidden reports whether err is a 403: the caller may not do this.
func IsForbidden(err error) bool { return HasStatus(err, http.StatusForbidden) }

// IsConflict reports whether err is a 409: a name taken, a run in the wrong phase, a
// resource in use, a concurrent change.
func IsConflict(err error) bool { return HasStatus(err, http.StatusConflict) }

// IsInvalid reports whether err is a 400: the request was malformed or invalid.
func IsInvalid(err error) bool { return HasStatus(err, http.StatusBadRequest) }

// IsRateLimited reports whether err is a 429: a quota or the rate limit; see
// Error.RetryAfter.
func IsRateLimited(err error) bool { return HasStatus(err, http.StatusTooManyRequests) }

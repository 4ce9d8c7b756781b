// Package apperr defines Baton's error kinds, the catalogue of reasons and codes from the
// API contract, and the Error type every layer returns. Transport code maps a Kind to an HTTP
// status through Kind.HTTPStatus, the one place where that mapping lives.
package apperr

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Kind classifies an error by what the caller can do about it.
type Kind int

// The kinds, each answered with one HTTP status.
const (
	KindInternal Kind = iota
	KindInvalid
	KindUnauthenticated
	KindForbidden
	KindNotFound
	KindMethodNotAllowed
	KindConflict
	KindTooLarge
	KindUnsupportedMedia
	KindUnprocessable
	KindLocked
	KindTooMany
	KindBadGateway
	KindUnavailable
	KindTimeout
	KindRequestTimeout
	KindURITooLong
	KindHeadersTooLarge
)

var kindStatus = map[Kind]int{
	KindInternal:         http.StatusInternalServerError,
	KindInvalid:          http.StatusBadRequest,
	KindUnauthenticated:  http.StatusUnauthorized,
	KindForbidden:        http.StatusForbidden,
	KindNotFound:         http.StatusNotFound,
	KindMethodNotAllowed: http.StatusMethodNotAllowed,
	KindConflict:         http.StatusConflict,
	KindTooLarge:         http.StatusRequestEntityTooLarge,
	KindUnsupportedMedia: http.StatusUnsupportedMediaType,
	KindUnprocessable:    http.StatusUnprocessableEntity,
	KindLocked:           http.StatusLocked,
	KindTooMany:          http.StatusTooManyRequests,
	KindBadGateway:       http.StatusBadGateway,
	KindUnavailable:      http.StatusServiceUnavailable,
	KindTimeout:          http.StatusGatewayTimeout,
	KindRequestTimeout:   http.StatusRequestTimeout,
	KindURITooLong:       http.StatusRequestURITooLong,
	KindHeadersTooLarge:  http.StatusRequestHeaderFieldsTooLarge,
}

// HTTPStatus is the status code a response carrying an error of this kind has.
func (k Kind) HTTPStatus() int {
	if s, ok := kindStatus[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Reason is one entry of the catalogue: a stable name, a numeric code and a kind.
type Reason struct {
	Name string
	Code int
	Kind Kind
}

// FieldError names one invalid field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is the error type of every Baton service. It carries a catalogue reason, a message
// fit for the caller, optional field errors and, for rate limits, when to retry.
type Error struct {
	Reason     Reason
	Message    string
	Fields     []FieldError
	RetryAfter time.Duration
	// Err is the underlying cause; it is logged, never shown to callers.
	Err error
}

// New returns an Error of the reason with a formatted message.
func New(r Reason, format string, args ...any) *Error {
	return &Error{Reason: r, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an Error of the reason that keeps cause for logs and errors.Is.
func Wrap(r Reason, cause error, format string, args ...any) *Error {
	return &Error{Reason: r, Message: fmt.Sprintf(format, args...), Err: cause}
}

// Invalid returns a validation error of the reason listing the bad fields.
func Invalid(r Reason, message string, fields ...FieldError) *Error {
	return &Error{Reason: r, Message: message, Fields: fields}
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Reason.Name, e.Message, e.Err)
	}
	return e.Reason.Name + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error of the same reason, so sentinel errors declared
// with New match any error of their reason whatever its message.
func (e *Error) Is(target error) bool {
	var t *Error
	if errors.As(target, &t) {
		return t.Reason == e.Reason
	}
	return false
}

// WithRetryAfter sets how long a caller should wait before trying again.
func (e *Error) WithRetryAfter(d time.Duration) *Error {
	e.RetryAfter = d
	return e
}

// As returns the *Error in err's chain, if there is one.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// KindOf returns the kind of err, KindInternal for errors Baton did not classify.
func KindOf(err error) Kind {
	if e, ok := As(err); ok {
		return e.Reason.Kind
	}
	return KindInternal
}

// HasReason reports whether err carries the reason r.
func HasReason(err error, r Reason) bool {
	e, ok := As(err)
	return ok && e.Reason == r
}

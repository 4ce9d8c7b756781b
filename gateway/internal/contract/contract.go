// Package contract holds the tests to the published contract: every request a test sends
// through the gateway (or straight to a service behind it) and every answer it gets are
// checked against the OpenAPI document the gateway serves, so the document and the
// behaviour cannot drift apart unnoticed.
//
// A test makes its HTTP client with Client (or wraps a transport with Transport); any
// exchange that does not keep to the document fails the test with a message naming the
// operation, the status and what differs. The rules:
//
//   - An answer's status is declared by the operation: a success exactly (`default` covers
//     errors only), an error exactly or by `default`; a request to a path or method the
//     document does not have is answered with an error.
//   - An answer's body has a declared content type and matches its schema; an answer the
//     document declares without a body has none. Error answers are the ErrorBody.
//   - A request the document refuses (a parameter, a body or credentials that do not match)
//     is refused by the service: answered 2xx, it is a mismatch.
//   - A followed log (`?follow=true`) streams until its task ends, a watch
//     (`text/event-stream`) until its run does: their status and content type are checked,
//     their bodies are not read.
//
// Paths outside the document's base (health, readiness) are not part of the published
// contract and pass unchecked. Counts of what was checked are kept per test binary and
// written by Report, from TestMain.
package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/baton-flow/baton/gateway/internal/openapi"
)

// Checker checks exchanges against one OpenAPI document and counts them. It is safe for
// concurrent use.
type Checker struct {
	doc    *openapi3.T
	router routers.Router
	base   string
	bodies *bodies

	requests  atomic.Int64 // requests checked
	responses atomic.Int64 // answers checked in full: status, content type, body
	streamed  atomic.Int64 // followed streams: status and content type
}

// New returns a Checker of the OpenAPI document doc (YAML or JSON).
func New(doc []byte) (*Checker, error) {
	loader := openapi3.NewLoader()
	d, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("contract: load the document: %w", err)
	}
	// The servers name where the document is served; tests reach it on loopback ports,
	// so operations are matched by path alone.
	d.Servers = nil
	router, err := legacy.NewRouter(d)
	if err != nil {
		return nil, fmt.Errorf("contract: route the document: %w", err)
	}
	if d.Components.Schemas["ErrorBody"] == nil {
		return nil, errors.New("contract: the document has no ErrorBody schema")
	}
	b, err := newBodies(doc)
	if err != nil {
		return nil, fmt.Errorf("contract: read the document's schemas: %w", err)
	}
	return &Checker{doc: d, router: router, base: commonBase(d), bodies: b}, nil
}

// commonBase is the path prefix shared by every path of the document ("/api/v2").
func commonBase(d *openapi3.T) string {
	var base string
	first := true
	for path := range d.Paths.Map() {
		dir := path[:strings.LastIndex(path, "/")+1]
		if first {
			base, first = dir, false
			continue
		}
		for !strings.HasPrefix(dir, base) {
			base = base[:strings.LastIndex(strings.TrimSuffix(base, "/"), "/")+1]
		}
	}
	return strings.TrimSuffix(base, "/")
}

var shared = sync.OnceValues(func() (*Checker, error) { return New(openapi.Document()) })

// Shared returns the Checker of the gateway's document, one per test binary, so Report
// counts every exchange of the binary's tests.
func Shared() *Checker {
	c, err := shared()
	if err != nil {
		// The openapi package's tests keep the document loadable; a broken one stops
		// every test that would trust it.
		panic(err)
	}
	return c
}

// Reporter is where mismatches go: a *testing.T or *testing.B.
type Reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// Option changes how a transport checks exchanges.
type Option func(*transport)

// StandIns names a response header that stand-ins for services (fakes that answer
// whatever a test asks of them) set on their answers. Such an answer says nothing of the
// service's behaviour: it is passed on unchecked and uncounted, and so is the request it
// answers, the refusal rule needing the real service's answer. Answers the gateway makes
// itself are checked as ever.
func StandIns(header string) Option { return func(t *transport) { t.standIn = header } }

// BehindGateway checks exchanges with a service reached directly, behind the gateway:
// the gateway authenticates callers and signs their principal into internal headers, so
// the document's credentials are not asked of the request.
func BehindGateway() Option { return func(t *transport) { t.behind = true } }

// Client returns an HTTP client like base (http.DefaultClient when nil) whose exchanges are
// checked by the shared Checker, reporting mismatches to r.
func Client(r Reporter, base *http.Client, opts ...Option) *http.Client {
	if base == nil {
		base = http.DefaultClient
	}
	c := *base
	c.Transport = Shared().Transport(r, base.Transport, opts...)
	return &c
}

// Transport returns a RoundTripper sending through next (http.DefaultTransport when nil)
// and reporting to r every exchange that does not keep to the document.
func (c *Checker) Transport(r Reporter, next http.RoundTripper, opts ...Option) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	t := &transport{checker: c, next: next, report: r}
	for _, o := range opts {
		o(t)
	}
	return t
}

type transport struct {
	checker *Checker
	next    http.RoundTripper
	report  Reporter
	behind  bool
	standIn string
}

// RoundTrip sends req and checks it and its answer. Failing to reach the server is the
// caller's to handle and passes through unchanged.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := t.checker
	if req.URL.Path != c.base && !strings.HasPrefix(req.URL.Path, c.base+"/") {
		return t.next.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("contract: read the request body: %w", err)
		}
		// The request is the caller's: what is sent is a copy carrying the body read.
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	ex, err := c.checkRequest(req, body, t.behind)
	if err != nil {
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	if t.standIn != "" && resp.Header.Get(t.standIn) != "" {
		return resp, nil
	}
	c.requests.Add(1)
	problem, err := c.checkResponse(ex, resp)
	if err != nil {
		return nil, err
	}
	if problem != "" {
		t.report.Helper()
		t.report.Errorf("contract: %s %s → %d does not keep to openapi.yaml%s: %s",
			req.Method, req.URL.RequestURI(), resp.StatusCode, ex.operation(), problem)
	}
	return resp, nil
}

// exchange is a request as checked, waiting for its answer.
type exchange struct {
	req   *http.Request
	input *openapi3filter.RequestValidationInput // nil when no operation matches
	// refused is why the document refuses the request; "" when it accepts it.
	refused string
}

func (e *exchange) operation() string {
	if e.input == nil {
		return " (no such operation)"
	}
	return " (" + e.input.Route.Operation.OperationID + ")"
}

func (c *Checker) options(behind bool) *openapi3filter.Options {
	o := &openapi3filter.Options{
		MultiError:          true,
		SkipSettingDefaults: true,
		// Bodies are validated with schemas compiled once (see bodies); readOnly is an
		// annotation there: read-only fields sent back are ignored (an export imports as
		// it is, API.md §3).
		ExcludeRequestBody:    true,
		ExcludeResponseBody:   true,
		IncludeResponseStatus: true,
		AuthenticationFunc:    credentialsPresent,
	}
	o.WithCustomSchemaErrorFunc(schemaMessage)
	if behind {
		o.AuthenticationFunc = openapi3filter.NoopAuthenticationFunc
	}
	return o
}

// credentialsPresent holds when the request carries what a security scheme names; whether
// the credentials are good is the service's to say (401), not the document's.
func credentialsPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s, r := in.SecurityScheme, in.RequestValidationInput.Request
	switch {
	case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		if scheme, _, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "bearer") {
			return nil
		}
	case s.Type == "apiKey" && s.In == "header":
		if r.Header.Get(s.Name) != "" {
			return nil
		}
	case s.Type == "apiKey" && s.In == "query":
		if r.URL.Query().Get(s.Name) != "" {
			return nil
		}
	}
	return fmt.Errorf("no %s credentials", in.SecuritySchemeName)
}

func (c *Checker) checkRequest(req *http.Request, body []byte, behind bool) (*exchange, error) {
	ex := &exchange{req: req}
	route, params, err := c.router.FindRoute(req)
	if err != nil && req.Method == http.MethodHead {
		// HEAD is GET without the body (RFC 9110 §9.3.2): a GET of the document answers it.
		get := req.Clone(req.Context())
		get.Method = http.MethodGet
		route, params, err = c.router.FindRoute(get)
	}
	if err != nil {
		ex.refused = err.Error()
		return ex, nil
	}
	// The filter reads the request it checks; it gets a copy of its own.
	probe := req.Clone(req.Context())
	probe.Body = http.NoBody
	ex.input = &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route, Options: c.options(behind)}
	var refused []string
	if err := openapi3filter.ValidateRequest(req.Context(), ex.input); err != nil {
		refused = append(refused, err.Error())
	}
	problem, err := c.checkRequestBody(route, req.Header.Get("Content-Type"), body)
	if err != nil {
		return nil, err
	}
	if problem != "" {
		refused = append(refused, "request body: "+problem)
	}
	ex.refused = strings.Join(refused, "; ")
	return ex, nil
}

// checkRequestBody says what of a request's body the operation refuses ("" for nothing).
// A body where the operation declares none is the service's to ignore.
func (c *Checker) checkRequestBody(route *routers.Route, contentType string, body []byte) (string, error) {
	rb := route.Operation.RequestBody
	if rb == nil || rb.Value == nil {
		return "", nil
	}
	if len(body) == 0 {
		if rb.Value.Required {
			return "a body is required", nil
		}
		return "", nil
	}
	key, mt := mediaKey(rb.Value.Content, contentType)
	if mt == nil {
		return fmt.Sprintf("content type %q is not declared (declared: %s)", contentType, strings.Join(contentTypes(rb.Value.Content), ", ")), nil
	}
	if mt.Schema == nil {
		return "", nil
	}
	base := pointer("paths", route.Path, strings.ToLower(route.Method), "requestBody")
	if rb.Ref != "" {
		base = refPointer(rb.Ref)
	}
	return c.bodies.validate(base+pointer("content", key, "schema"), contentType, body)
}

// checkResponse checks resp against the exchange's operation and returns what does not
// keep to the document ("" when all does). It leaves resp's body readable by the caller;
// err is a failure to read it.
func (c *Checker) checkResponse(ex *exchange, resp *http.Response) (problem string, err error) {
	var problems []string
	status := resp.StatusCode
	if ex.refused != "" && status < 400 {
		problems = append(problems, fmt.Sprintf("answered %d to a request the document refuses: %s", status, ex.refused))
	}
	if (followed(ex.req) || eventStream(resp)) && ex.input != nil {
		// The body streams until the task (or the run watched) ends: what can be checked
		// now is the head.
		c.streamed.Add(1)
		problems = append(problems, c.checkHead(ex, resp)...)
		return strings.Join(problems, "\n\t"), nil
	}
	body, err := readBody(resp)
	if err != nil {
		return "", err
	}
	c.responses.Add(1)
	var more []string
	if ex.input == nil {
		more, err = c.checkErrorBody(resp, body)
	} else {
		more, err = c.checkAnswer(ex, resp, body)
	}
	if err != nil {
		return "", err
	}
	problems = append(problems, more...)
	return strings.Join(problems, "\n\t"), nil
}

// declared is the response the operation declares for status: a success exactly (or by
// its range), an error also by `default`.
func declared(op *openapi3.Operation, status int) *openapi3.ResponseRef {
	if key := responseKey(op.Responses, status); key != "" {
		return op.Responses.Value(key)
	}
	return nil
}

// checkHead checks an answer's status and content type.
func (c *Checker) checkHead(ex *exchange, resp *http.Response) []string {
	op := ex.input.Route.Operation
	r := declared(op, resp.StatusCode)
	if r == nil {
		return []string{fmt.Sprintf("status %d is not declared (declared: %s)", resp.StatusCode, strings.Join(statuses(op), ", "))}
	}
	if ct := resp.Header.Get("Content-Type"); len(r.Value.Content) > 0 && r.Value.Content.Get(ct) == nil {
		return []string{fmt.Sprintf("content type %q is not declared for %d (declared: %s)", ct, resp.StatusCode, strings.Join(contentTypes(r.Value.Content), ", "))}
	}
	return nil
}

// checkAnswer checks an answer's status, headers, content type and body.
func (c *Checker) checkAnswer(ex *exchange, resp *http.Response, body []byte) ([]string, error) {
	if problems := c.checkHead(ex, resp); problems != nil {
		return append(problems, "body: "+excerpt(body)), nil
	}
	status := resp.StatusCode
	if ex.req.Method == http.MethodHead || status == http.StatusNotModified {
		return nil, nil
	}
	route := ex.input.Route
	key := responseKey(route.Operation.Responses, status)
	r := route.Operation.Responses.Value(key)
	if len(r.Value.Content) == 0 {
		if len(body) > 0 {
			return []string{fmt.Sprintf("a body where the document declares none for %d: %s", status, excerpt(body))}, nil
		}
		return nil, nil
	}
	var problems []string
	// The headers the answer declares (Location, Retry-After…); the body is checked below.
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: ex.input,
		Status:                 status,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                ex.input.Options,
	}
	if err := openapi3filter.ValidateResponse(ex.req.Context(), in); err != nil {
		problems = append(problems, err.Error())
	}
	contentType := resp.Header.Get("Content-Type")
	if mtKey, mt := mediaKey(r.Value.Content, contentType); mt != nil && mt.Schema != nil {
		base := pointer("paths", route.Path, strings.ToLower(route.Method), "responses", key)
		if r.Ref != "" {
			base = refPointer(r.Ref)
		}
		problem, err := c.bodies.validate(base+pointer("content", mtKey, "schema"), contentType, body)
		if err != nil {
			return nil, err
		}
		if problem != "" {
			problems = append(problems, "response body: "+problem)
		}
	}
	if problems != nil {
		problems = append(problems, "body: "+excerpt(body))
	}
	return problems, nil
}

// checkErrorBody checks an answer to a request no operation matches: an error, and the
// ErrorBody.
func (c *Checker) checkErrorBody(resp *http.Response, body []byte) ([]string, error) {
	if resp.StatusCode < 400 {
		return []string{fmt.Sprintf("answered %d where the document has no such operation", resp.StatusCode)}, nil
	}
	contentType := resp.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(contentType); mt != "application/json" {
		return []string{fmt.Sprintf("an error answered as %q, not the ErrorBody in application/json", contentType)}, nil
	}
	problem, err := c.bodies.validate(pointer("components", "schemas", "ErrorBody"), contentType, body)
	if err != nil || problem == "" {
		return nil, err
	}
	return []string{fmt.Sprintf("an error body that is not the ErrorBody: %s\n\tbody: %s", problem, excerpt(body))}, nil
}

// schemaMessage says where a parameter breaks its schema and how, without the schema's
// text.
func schemaMessage(err *openapi3.SchemaError) string {
	v, _ := json.Marshal(err.Value)
	// The JSON Schema 2020-12 validator's reasons name their own locations, one a line,
	// after a line naming the schema's made-up URL.
	if head, _, ok := strings.Cut(err.Reason, "\n"); ok && strings.HasPrefix(head, "jsonschema validation failed") {
		return fmt.Sprintf("%s (value: %s)", schemaProblem(errors.New(err.Reason)), excerpt(v))
	}
	return fmt.Sprintf("at %q: %s (value: %s)", "/"+strings.Join(err.JSONPointer(), "/"), err.Reason, excerpt(v))
}

// followed reports whether req asks for a log that streams until its task ends.
func followed(req *http.Request) bool {
	follow, err := strconv.ParseBool(req.URL.Query().Get("follow"))
	return err == nil && follow
}

// eventStream reports whether resp is a successful answer streamed as Server-Sent
// Events (a run watched), which lasts as long as what it follows.
func eventStream(resp *http.Response) bool {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && mt == "text/event-stream" && resp.StatusCode < 300
}

// readBody reads resp's body and puts it back for the caller.
func readBody(resp *http.Response) ([]byte, error) {
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("contract: read the answer: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

func statuses(op *openapi3.Operation) []string {
	var out []string
	for s := range op.Responses.Map() {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func contentTypes(content openapi3.Content) []string {
	var out []string
	for mt := range content {
		out = append(out, mt)
	}
	slices.Sort(out)
	return out
}

// excerpt is the start of a body, enough to see what was answered.
func excerpt(body []byte) string {
	const most = 1024
	if len(body) > most {
		return string(body[:most]) + "…"
	}
	return string(body)
}

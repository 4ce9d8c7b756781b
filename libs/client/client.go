// Package client is the Go SDK of Baton's /api/v2: a typed method for each operation of
// the published contract (gateway/internal/openapi/openapi.yaml), the contract's errors as
// *Error, page iterators, a run watcher, log following and helpers for the common paths.
//
//	c, err := client.New("https://baton.example.com", client.WithToken(token))
//	run, err := c.SubmitAndWait(ctx, "infra", "deploy", &client.WorkflowSubmitRequest{})
//
// # Why hand-written
//
// The client is written by hand over a small generic core (Call: a request with its
// credentials, any non-2xx answer as *Error, a JSON answer decoded), one typed method per
// operation. Both generators tried on the document, oapi-codegen
// v2.8.2 and ogen v1.25.0, stop on it: the document is OpenAPI 3.1 and uses type arrays
// (`type: [string, number, boolean, array, 'null']` for a setting's value, nullable quota
// limits and label values), which neither supports. Rewriting those as oneOf would change
// how the contract reads for every other reader, and neither generator handles the rest
// well either: the v4 compatibility shapes (params as a list or a map, members by id or
// email), a followed log that streams until its task ends, and Tekton YAML bodies beside
// JSON. Two tests in the gateway module keep the package and the document together:
// gateway/internal/openapi/sdk_test.go fails when an operation has no method here or a
// schema's property no field of a kind that decodes it, and
// gateway/internal/standalone/sdk_test.go drives the package against a standalone Baton
// through the contract checker, so a request the document refuses or an answer it does
// not declare fails it.
//
// # Coverage
//
// Every operation of the document has a method, except: the deprecated v4 paths
// (`/user/profile`, `/global-params`, `/workflow/{name}/export`, `/schedule/validate-cron`,
// `/integration/github/**`, `DELETE /team/{team}/approvers/{groupId}`), which are the
// same endpoints as the methods named in their `x-maps-to`; the chat platform's endpoints
// (`/integration/chat/**`) and code-host deliveries to `/webhook`, which only the platforms
// can sign; `GET /callback`, the same callback as PostCallback for links that cannot
// POST; and `/docs`, a page for browsers. The method names follow the document's
// operationIds.
//
// # Credentials
//
// New takes the server and options; nothing is read from the environment unless asked:
// FromEnv reads BATON_SERVER and BATON_TOKEN. The token is sent as
// `Authorization: Bearer <token>`.
//
// # Workers
//
// Workers for `generic` tasks are built on this client in a package of their own,
// client/worker.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Version is the SDK's version, sent in the default User-Agent.
const Version = "2.0.0"

// Environment variables FromEnv reads.
const (
	EnvServer = "BATON_SERVER"
	EnvToken  = "BATON_TOKEN"
)

// Client calls one Baton server. It is safe for concurrent use.
type Client struct {
	base      *url.URL // the server, without a trailing slash
	token     string
	http      *http.Client
	userAgent string
	poll      time.Duration
}

// Option configures a Client.
type Option func(*Client)

// WithToken sends token (an opaque `bt…_` token or an OIDC JWT) with every request.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithHTTPClient sends requests with hc instead of a client of its own. Its Timeout, if
// any, also limits followed logs; prefer contexts for deadlines.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// WithUserAgent sets the User-Agent header, by default "baton-go/<Version>".
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithPollInterval sets how often Watch and the waiting helpers read a run, by default
// every second.
func WithPollInterval(d time.Duration) Option { return func(c *Client) { c.poll = d } }

// New returns a client of the Baton server at server (scheme, host and optional port, e.g.
// "https://baton.example.com" or "http://127.0.0.1:8080"; a path "/api/v2" at its end
// is allowed and dropped).
func New(server string, opts ...Option) (*Client, error) {
	if server == "" {
		return nil, errors.New("client: no server given")
	}
	u, err := url.Parse(server)
	if err != nil {
		return nil, fmt.Errorf("client: server %q: %w", server, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("client: server %q: want http(s)://host[:port]", server)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v2")
	u.RawQuery, u.Fragment = "", ""
	c := &Client{base: u, http: http.DefaultClient, userAgent: "baton-go/" + Version, poll: time.Second}
	for _, o := range opts {
		o(c)
	}
	if c.poll <= 0 {
		return nil, errors.New("client: the poll interval must be positive")
	}
	return c, nil
}

// FromEnv returns a client of the server named by BATON_SERVER with the token in
// BATON_TOKEN (if set); opts apply after them.
func FromEnv(opts ...Option) (*Client, error) {
	server := os.Getenv(EnvServer)
	if server == "" {
		return nil, fmt.Errorf("client: %s is not set", EnvServer)
	}
	if t := os.Getenv(EnvToken); t != "" {
		opts = append([]Option{WithToken(t)}, opts...)
	}
	return New(server, opts...)
}

// Server answers the server the client calls.
func (c *Client) Server() string { return c.base.String() }

// request is one call of the API.
type request struct {
	method      string
	path        string // below /api/v2, already escaped
	query       url.Values
	body        io.Reader
	contentType string
	accept      string
	// lastEventID, when set, is sent as Last-Event-ID (a stream opened again).
	lastEventID string
}

// do sends r and answers the response of a 2xx; any other status is an *Error, the body
// read and closed.
func (c *Client) do(ctx context.Context, r request) (*http.Response, error) {
	u := c.base.String() + "/api/v2" + r.path
	if q := r.query.Encode(); q != "" {
		u += "?" + q
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, r.body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	accept := r.accept
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	if r.lastEventID != "" {
		req.Header.Set("Last-Event-ID", r.lastEventID)
	}
	req.Header.Set("User-Agent", c.userAgent)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, newError(r.method, r.path, resp)
	}
	return resp, nil
}

// call sends r with in as its JSON body (none when nil) and decodes a 2xx answer's body
// into out (dropped when nil). It answers the status.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, in, out any) (int, error) {
	r := request{method: method, path: path, query: query}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, fmt.Errorf("client: %s %s: encode the body: %w", method, path, err)
		}
		r.body, r.contentType = bytes.NewReader(b), "application/json"
	}
	resp, err := c.do(ctx, r)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.StatusCode, fmt.Errorf("client: %s %s: decode the answer: %w", method, path, err)
	}
	return resp.StatusCode, nil
}

// Call sends a request to path, below /api/v2 and already escaped (e.g.
// "/team/infra/workflow/deploy"), with in as its JSON body (none when nil), and decodes a
// 2xx answer's JSON body into out (dropped when nil); it answers the status. Any other
// answer is an *Error. It is the core every method is built on, for endpoints newer than
// this package (the workers' own, in client/worker).
func (c *Client) Call(ctx context.Context, method, path string, query url.Values, in, out any) (int, error) {
	return c.call(ctx, method, path, query, in, out)
}

// raw sends r and answers the whole body of a 2xx answer.
func (c *Client) raw(ctx context.Context, r request) ([]byte, error) {
	resp, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: read the answer: %w", r.method, r.path, err)
	}
	return b, nil
}

// p escapes each segment and joins them into a path below /api/v2.
func p(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

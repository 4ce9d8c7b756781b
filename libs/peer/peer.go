// Package peer calls another Baton service over HTTP: it finds the service's instances
// through discovery and takes them in turn, signs each request with the principal it acts
// for, sends and reads JSON, and hands back the status and reason of any answer other than
// 200 for the caller to decide on.
package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/registry"
)

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// Client calls the instances of one service.
type Client struct {
	service  string
	resolver registry.Resolver
	signer   *auth.Signer
	http     *http.Client
	next     atomic.Uint64
}

// idleConnTimeout closes a connection left idle well before the services' read timeout
// (30 s, libs/httpx) would: Fiber answers a connection that sent nothing by then with an
// error the client logs as an unsolicited response.
const idleConnTimeout = 10 * time.Second

// New returns the client of service; timeout bounds each call.
func New(service string, resolver registry.Resolver, signer *auth.Signer, timeout time.Duration) *Client {
	transport := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: idleConnTimeout}
	return &Client{service: service, resolver: resolver, signer: signer,
		http: &http.Client{Timeout: timeout, Transport: traced(service, transport)}}
}

// traced has each call made in a client span, "<service> <METHOD>", whose W3C trace
// context (traceparent) goes with the request: the called service's server span is its
// child, and a request's trace follows it from service to service. Only traces are made
// here; the calls' metrics are the servers' (libs/httpx).
func traced(service string, rt http.RoundTripper) http.RoundTripper {
	return otelhttp.NewTransport(rt,
		otelhttp.WithMeterProvider(noop.NewMeterProvider()),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return service + " " + r.Method }))
}

// Answer is how a call was answered: its status, for an error its reason and message, and
// for a 200 its headers (some contracts say more there, as when a token expires).
type Answer struct {
	Status  int
	Reason  string
	Message string
	Header  http.Header
}

// Get calls path?query signed as p and decodes a 200 answer into out. Any other answer is
// returned as the peer's own error when it is a client error Baton's catalogue knows (a
// 404 from the peer reaches the caller as that 404), else as DependencyUnavailable.
func (c *Client) Get(ctx context.Context, p auth.Principal, path string, query url.Values, out any) error {
	a, err := c.Call(ctx, p, http.MethodGet, path, query, nil, out)
	if err != nil || a.Status == http.StatusOK {
		return err
	}
	return c.Refused(a)
}

// Refused is the error of an answer that is not a 200: the peer's own error when it is a
// client error Baton's catalogue knows, else DependencyUnavailable.
func (c *Client) Refused(a Answer) error {
	for _, r := range apperr.Catalogue {
		if r.Name == a.Reason && r.Kind.HTTPStatus() == a.Status && a.Status < 500 {
			return apperr.New(r, "%s", a.Message)
		}
	}
	return apperr.New(apperr.DependencyUnavailable, "The %s service answered %d; try again.", c.service, a.Status)
}

// Unavailable is the error of a call that did not get a usable answer, wrapping cause.
func (c *Client) Unavailable(cause error) error {
	return apperr.Wrap(apperr.DependencyUnavailable, cause, "The %s service is unavailable; try again.", c.service)
}

// Call sends method path?query, with in as its JSON body unless nil, signed as p, and
// decodes a 200 answer into out unless nil. Any other answer is returned, not an error;
// an error means no instance answered or the answer could not be read.
func (c *Client) Call(ctx context.Context, p auth.Principal, method, path string, query url.Values, in, out any) (Answer, error) {
	urls, err := c.resolver.Resolve(ctx, c.service)
	if err == nil && len(urls) == 0 {
		err = registry.ErrNoInstance
	}
	if err != nil {
		return Answer{}, c.Unavailable(err)
	}
	u := urls[int(c.next.Add(1)%uint64(len(urls)))] + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var body io.Reader
	if in != nil {
		payload, err := json.Marshal(in)
		if err != nil {
			return Answer{}, fmt.Errorf("encode a request to %s: %w", c.service, err)
		}
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return Answer{}, fmt.Errorf("request %s: %w", u, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if err := c.signer.SetHeaders(p, req.Header.Set); err != nil {
		return Answer{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Answer{}, c.Unavailable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		}
		_ = json.NewDecoder(io.LimitReader(resp.Body, maxErrorBody)).Decode(&e)
		return Answer{Status: resp.StatusCode, Reason: e.Reason, Message: e.Message}, nil
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return Answer{}, c.Unavailable(fmt.Errorf("decode the %s answer: %w", c.service, err))
		}
	}
	return Answer{Status: http.StatusOK, Header: resp.Header}, nil
}

package contract

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doc is a small contract: things with params, a log that can be followed.
const doc = `openapi: 3.1.0
info: {title: test, version: 1.0.0}
security:
  - bearerAuth: []
paths:
  /api/v2/thing:
    post:
      operationId: createThing
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Thing'}
      responses:
        '201':
          description: created
          headers:
            Location: {schema: {type: string}}
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Thing'}
        '400': {$ref: '#/components/responses/Error'}
        '401': {$ref: '#/components/responses/Error'}
        default: {$ref: '#/components/responses/Error'}
  /api/v2/thing/{id}:
    parameters:
      - {name: id, in: path, required: true, schema: {type: string, pattern: '^[0-9]+$'}}
    get:
      operationId: getThing
      responses:
        '200':
          description: the thing
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Thing'}
        default: {$ref: '#/components/responses/Error'}
    delete:
      operationId: deleteThing
      responses:
        '204': {description: gone}
        default: {$ref: '#/components/responses/Error'}
  /api/v2/thing/{id}/log:
    parameters:
      - {name: id, in: path, required: true, schema: {type: string}}
    get:
      operationId: getThingLog
      parameters:
        - {name: follow, in: query, schema: {type: boolean}}
      responses:
        '200':
          description: the log
          content:
            text/plain:
              schema: {type: string}
        default: {$ref: '#/components/responses/Error'}
  /api/v2/thing/{id}/watch:
    parameters:
      - {name: id, in: path, required: true, schema: {type: string}}
    get:
      operationId: watchThing
      responses:
        '200':
          description: the thing as it changes
          content:
            text/event-stream:
              schema: {type: string}
        default: {$ref: '#/components/responses/Error'}
  /api/v2/open:
    get:
      operationId: open
      security: []
      responses:
        '200':
          description: open
          content:
            application/json:
              schema: {type: object}
components:
  securitySchemes:
    bearerAuth: {type: http, scheme: bearer}
  responses:
    Error:
      description: an error
      content:
        application/json:
          schema: {$ref: '#/components/schemas/ErrorBody'}
  schemas:
    Thing:
      type: object
      required: [name]
      properties:
        name: {type: string}
        params:
          type: array
          items:
            type: object
            required: [name]
            properties: {name: {type: string}, value: {}}
    ErrorBody:
      type: object
      required: [status, reason]
      properties:
        status: {type: integer}
        reason: {type: string}
`

const errorJSON = `{"status":404,"reason":"NOT_FOUND"}`

// reporter collects what a transport reports.
type reporter struct {
	mu   sync.Mutex
	msgs []string
}

func (r *reporter) Helper() {}

func (r *reporter) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

// answer is what the fake service answers.
type answer struct {
	status      int
	contentType string
	body        string
}

func TestExchangesAreCheckedAgainstTheDocument(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		method, path string
		auth         bool
		body         string
		answer       answer
		// want is a part of the report; "" when the exchange keeps to the document.
		want string
		// streamed is set when only the head is checked.
		streamed bool
	}{
		{name: "a read as declared", method: "GET", path: "/api/v2/thing/1", auth: true,
			answer: answer{200, "application/json; charset=utf-8", `{"name":"a","params":[{"name":"x","value":1}]}`}},
		{name: "a body breaking its schema", method: "GET", path: "/api/v2/thing/1", auth: true,
			answer: answer{200, "application/json", `{"name":"a","params":{"x":1}}`}, want: `at '/params': got object, want array`},
		{name: "a success not declared", method: "POST", path: "/api/v2/thing", auth: true, body: `{"name":"a"}`,
			answer: answer{200, "application/json", `{"name":"a"}`}, want: "status 200 is not declared (declared: 201, 400, 401, default)"},
		{name: "an error by default", method: "GET", path: "/api/v2/thing/1", auth: true,
			answer: answer{409, "application/json", errorJSON}},
		{name: "an error that is not the ErrorBody", method: "GET", path: "/api/v2/thing/1", auth: true,
			answer: answer{404, "application/json", `{"error":"nope"}`}, want: `missing properties 'status', 'reason'`},
		{name: "an undeclared content type", method: "GET", path: "/api/v2/thing/1", auth: true,
			answer: answer{200, "text/html", `<p>a</p>`}, want: `content type "text/html" is not declared for 200`},
		{name: "a delete answered without a body", method: "DELETE", path: "/api/v2/thing/1", auth: true,
			answer: answer{204, "", ""}},
		{name: "a refused request answered 2xx", method: "POST", path: "/api/v2/thing", auth: true, body: `{"title":"a"}`,
			answer: answer{201, "application/json", `{"name":"a"}`}, want: `answered 201 to a request the document refuses`},
		{name: "a refused request answered 400", method: "POST", path: "/api/v2/thing", auth: true, body: `{"title":"a"}`,
			answer: answer{400, "application/json", errorJSON}},
		{name: "a path parameter the document refuses", method: "GET", path: "/api/v2/thing/abc", auth: true,
			answer: answer{200, "application/json", `{"name":"a"}`}, want: `parameter "id" in path`},
		{name: "no credentials answered 2xx", method: "GET", path: "/api/v2/thing/1",
			answer: answer{200, "application/json", `{"name":"a"}`}, want: "no bearerAuth credentials"},
		{name: "no credentials answered 401", method: "POST", path: "/api/v2/thing", body: `{"name":"a"}`,
			answer: answer{401, "application/json", errorJSON}},
		{name: "an open operation", method: "GET", path: "/api/v2/open", answer: answer{200, "application/json", `{}`}},
		{name: "no such operation answered with an error", method: "GET", path: "/api/v2/nothing", auth: true,
			answer: answer{404, "application/json", errorJSON}},
		{name: "no such operation answered 200", method: "GET", path: "/api/v2/nothing", auth: true,
			answer: answer{200, "application/json", `{}`}, want: "answered 200 where the document has no such operation"},
		{name: "a method not declared", method: "PUT", path: "/api/v2/thing/1", auth: true, body: `{}`,
			answer: answer{405, "text/plain", "no"}, want: `an error answered as "text/plain"`},
		{name: "a log", method: "GET", path: "/api/v2/thing/1/log", auth: true, answer: answer{200, "text/plain; charset=utf-8", "line\n"}},
		{name: "a followed log", method: "GET", path: "/api/v2/thing/1/log?follow=true", auth: true,
			answer: answer{200, "text/plain; charset=utf-8", "line\n"}, streamed: true},
		{name: "a followed log of the wrong type", method: "GET", path: "/api/v2/thing/1/log?follow=true", auth: true,
			answer: answer{200, "application/octet-stream", "line\n"}, streamed: true, want: `content type "application/octet-stream" is not declared`},
		{name: "a watch", method: "GET", path: "/api/v2/thing/1/watch", auth: true,
			answer: answer{200, "text/event-stream", "id: 1\nevent: thing\ndata: {}\n\n"}, streamed: true},
		{name: "a stream where JSON is declared", method: "GET", path: "/api/v2/thing/1", auth: true,
			answer: answer{200, "text/event-stream", "data: {}\n\n"}, streamed: true, want: `content type "text/event-stream" is not declared`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := New([]byte(doc))
			require.NoError(t, err)
			var got []byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, _ = io.ReadAll(r.Body)
				if tt.answer.contentType != "" {
					w.Header().Set("Content-Type", tt.answer.contentType)
				}
				w.WriteHeader(tt.answer.status)
				_, _ = io.WriteString(w, tt.answer.body)
			}))
			t.Cleanup(srv.Close)

			rep := &reporter{}
			client := &http.Client{Transport: c.Transport(rep, nil)}
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, body)
			require.NoError(t, err)
			if tt.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tt.auth {
				req.Header.Set("Authorization", "Bearer x")
			}
			resp, err := client.Do(req)
			require.NoError(t, err)
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())

			assert.Equal(t, tt.body, string(got), "the service gets the body")
			assert.Equal(t, tt.answer.body, string(raw), "the caller gets the answer")
			if tt.want == "" {
				assert.Empty(t, rep.msgs)
			} else {
				require.Len(t, rep.msgs, 1)
				assert.Contains(t, rep.msgs[0], tt.want)
				assert.Contains(t, rep.msgs[0], tt.method+" "+tt.path)
			}
			n := c.Counts()
			assert.EqualValues(t, 1, n.Requests)
			if tt.streamed {
				assert.Equal(t, Counts{Requests: 1, Streamed: 1}, n)
			} else {
				assert.Equal(t, Counts{Requests: 1, Responses: 1}, n)
			}
		})
	}
}

// A body answered where the document declares none is a mismatch.
func TestNoBodyWhereNoneIsDeclared(t *testing.T) {
	t.Parallel()
	c, err := New([]byte(doc))
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"name":"a"}`)
	}))
	t.Cleanup(srv.Close)
	rep := &reporter{}
	req, err := http.NewRequest(http.MethodDelete, srv.URL+"/api/v2/thing/1", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer x")
	resp, err := (&http.Client{Transport: c.Transport(rep, nil)}).Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Len(t, rep.msgs, 1)
	assert.Contains(t, rep.msgs[0], "status 200 is not declared")
}

// Behind the gateway a service gets signed headers, not the document's credentials.
func TestBehindTheGatewayCredentialsAreNotAsked(t *testing.T) {
	t.Parallel()
	c, err := New([]byte(doc))
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"name":"a"}`)
	}))
	t.Cleanup(srv.Close)
	rep := &reporter{}
	opt := BehindGateway()
	resp, err := (&http.Client{Transport: c.Transport(rep, nil, opt)}).Get(srv.URL + "/api/v2/thing/1")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Empty(t, rep.msgs)
}

// Paths outside the document's base are not the published contract.
func TestPathsOutsideTheContractPass(t *testing.T) {
	t.Parallel()
	c, err := New([]byte(doc))
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "UP")
	}))
	t.Cleanup(srv.Close)
	rep := &reporter{}
	resp, err := (&http.Client{Transport: c.Transport(rep, nil)}).Get(srv.URL + "/health")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Empty(t, rep.msgs)
	assert.Equal(t, Counts{}, c.Counts())
}

// The gateway's own document loads, and its base is /api/v2.
func TestTheGatewaysDocumentLoads(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "/api/v2", Shared().base)
}

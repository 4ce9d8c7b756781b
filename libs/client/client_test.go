package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/client"
)

// serve starts h and answers a client of it with token "t0k" and a short poll interval.
func serve(t *testing.T, h http.HandlerFunc) *client.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, client.WithToken("t0k"), client.WithPollInterval(time.Millisecond))
	require.NoError(t, err)
	return c
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, give, want string
		wantErr          bool
	}{
		{name: "host and port", give: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{name: "trailing slash", give: "https://baton.example.com/", want: "https://baton.example.com"},
		{name: "api base dropped", give: "https://baton.example.com/api/v2", want: "https://baton.example.com"},
		{name: "behind a path prefix", give: "https://example.com/baton/api/v2/", want: "https://example.com/baton"},
		{name: "empty", give: "", wantErr: true},
		{name: "no scheme", give: "baton.example.com", wantErr: true},
		{name: "other scheme", give: "ftp://baton.example.com", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := client.New(tt.give)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, c.Server())
		})
	}
}

func TestFromEnvReadsServerAndToken(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		writeJSON(w, http.StatusOK, map[string]any{"features": map[string]bool{"activity": true}})
	}))
	t.Cleanup(srv.Close)
	t.Setenv(client.EnvServer, srv.URL)
	t.Setenv(client.EnvToken, "btg_secret")
	c, err := client.FromEnv()
	require.NoError(t, err)
	f, err := c.GetFeatures(t.Context())
	require.NoError(t, err)
	assert.True(t, f.Features["activity"])
	assert.Equal(t, "Bearer btg_secret", got)

	t.Setenv(client.EnvServer, "")
	_, err = client.FromEnv()
	assert.ErrorContains(t, err, client.EnvServer)
}

// Every request carries the token, the user agent and JSON's content type; path values
// are escaped segment by segment.
func TestRequestsCarryCredentialsAndEscapedPaths(t *testing.T) {
	t.Parallel()
	var got *http.Request
	var body map[string]any
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		got = r
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		writeJSON(w, http.StatusCreated, map[string]any{"id": "r1", "status": "ready", "phase": "pending"})
	})
	run, err := c.SubmitWorkflow(t.Context(), "in fra", "a/b", &client.WorkflowSubmitRequest{
		Params: map[string]any{"n": 1}, IdempotencyKey: "k"}, true)
	require.NoError(t, err)
	assert.Equal(t, "r1", run.ID)
	assert.Equal(t, "/api/v2/team/in%20fra/workflow/a%2Fb/submit", got.URL.EscapedPath())
	assert.Equal(t, "true", got.URL.Query().Get("start"))
	assert.Equal(t, "Bearer t0k", got.Header.Get("Authorization"))
	assert.Equal(t, "baton-go/"+client.Version, got.Header.Get("User-Agent"))
	assert.Equal(t, "application/json", got.Header.Get("Content-Type"))
	assert.Equal(t, map[string]any{"params": map[string]any{"n": float64(1)}, "idempotencyKey": "k"}, body)
}

// A decision to reject is sent as approved=false, not left out.
func TestRejectSendsFalse(t *testing.T) {
	t.Parallel()
	var body []map[string]any
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		w.WriteHeader(http.StatusNoContent)
	})
	require.NoError(t, c.Reject(t.Context(), "infra", "a1", "not now"))
	assert.Equal(t, []map[string]any{{"id": "a1", "approved": false, "comments": "not now"}}, body)
}

func TestQueriesAreEncodedAsTheContractSays(t *testing.T) {
	t.Parallel()
	var got *http.Request
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		got = r
		writeJSON(w, http.StatusOK, map[string]any{"content": []any{}, "last": true})
	})
	from := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	_, err := c.QueryWorkflowRuns(t.Context(), "infra", client.RunQuery{
		Labels: map[string]string{"z": "1", "env": "prod"}, Statuses: []string{"failed", "timedout"},
		From: from, Order: "DESC", Page: 2, Limit: 50})
	require.NoError(t, err)
	q := got.URL.Query()
	assert.Equal(t, "env=prod,z=1", q.Get("labels"))
	assert.Equal(t, "failed,timedout", q.Get("statuses"))
	assert.Equal(t, strconv.FormatInt(from.UnixMilli(), 10), q.Get("fromDate"))
	assert.Equal(t, "DESC", q.Get("order"))
	assert.Equal(t, "2", q.Get("page"))
	assert.Equal(t, "50", q.Get("limit"))
	assert.False(t, q.Has("toDate"), "unset filters are left to the server's defaults")
	assert.False(t, q.Has("workflows"))
}

func TestErrorsAreTyped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		header  map[string]string
		body    string
		check   func(*testing.T, error)
		reason  string
		message string
	}{
		{
			name: "not found", status: 404,
			header: map[string]string{"X-Request-Id": "req-1"},
			body: `{"timestamp":"2026-01-01T00:00:00.000Z","status":404,"error":"Not Found","code":1207,` +
				`"reason":"WORKFLOW_NOT_FOUND","message":"Workflow 'x' was not found in team 'infra'.",` +
				`"path":"/api/v2/team/infra/workflow/x","traceId":"4bf9"}`,
			reason: "WORKFLOW_NOT_FOUND", message: "Workflow 'x' was not found in team 'infra'.",
			check: func(t *testing.T, err error) {
				assert.True(t, client.IsNotFound(err))
				assert.True(t, client.HasReason(err, "WORKFLOW_NOT_FOUND"))
				assert.False(t, client.HasReason(err, "TEAM_NOT_FOUND"))
				e, _ := client.AsError(err)
				assert.Equal(t, 1207, e.Code)
				assert.Equal(t, "4bf9", e.TraceID)
				assert.Equal(t, "req-1", e.RequestID)
				assert.Equal(t, "/api/v2/team/infra/workflow/x", e.Path)
				assert.Contains(t, err.Error(), "(trace 4bf9)")
			},
		},
		{
			name: "unauthorized says how to log in", status: 401,
			body:   `{"status":401,"error":"Unauthorized","code":1010,"reason":"TOKEN_INVALID_REQ","message":"The token is not valid.","path":"/x"}`,
			reason: "TOKEN_INVALID_REQ", message: "The token is not valid: " + client.LoginHint + ".",
			check: func(t *testing.T, err error) { assert.True(t, client.IsUnauthorized(err)) },
		},
		{
			name: "validation names its fields", status: 400,
			body: `{"status":400,"error":"Bad Request","code":1209,"reason":"WORKFLOW_INVALID","message":"Invalid.","path":"/x",` +
				`"errors":[{"field":"tasks[2].dependencies[0].taskRef","message":"no task named 'lint'"}]}`,
			reason: "WORKFLOW_INVALID", message: "Invalid.",
			check: func(t *testing.T, err error) {
				assert.True(t, client.IsInvalid(err))
				e, _ := client.AsError(err)
				assert.Equal(t, []client.FieldError{{Field: "tasks[2].dependencies[0].taskRef", Message: "no task named 'lint'"}}, e.Fields)
				assert.Contains(t, err.Error(), "tasks[2].dependencies[0].taskRef: no task named 'lint'")
			},
		},
		{
			name: "rate limited says when to come back", status: 429,
			header: map[string]string{"Retry-After": "7"},
			body:   `{"status":429,"error":"Too Many Requests","code":1021,"reason":"RATE_LIMITED","message":"Slow down.","path":"/x"}`,
			reason: "RATE_LIMITED", message: "Slow down.",
			check: func(t *testing.T, err error) {
				assert.True(t, client.IsRateLimited(err))
				e, _ := client.AsError(err)
				assert.Equal(t, 7*time.Second, e.RetryAfter)
			},
		},
		{
			name: "a proxy's page", status: 502, body: "<html>bad gateway</html>",
			message: "<html>bad gateway</html>",
			check:   func(t *testing.T, err error) { assert.True(t, client.HasStatus(err, 502)) },
		},
		{
			name: "empty body", status: 503, message: "Service Unavailable",
			check: func(t *testing.T, err error) { assert.True(t, client.HasStatus(err, 503)) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := serve(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			})
			_, err := c.GetWorkflow(t.Context(), "infra", "x")
			require.Error(t, err)
			var e *client.Error
			require.True(t, errors.As(fmt.Errorf("wrapped: %w", err), &e), "an *Error through wrapping")
			assert.Equal(t, tt.status, e.StatusCode)
			assert.Equal(t, tt.reason, e.Reason)
			assert.Equal(t, tt.message, e.Message)
			assert.Equal(t, http.MethodGet, e.Method)
			tt.check(t, err)
		})
	}
}

// page answers items [from, to) of n numbered runs as the API pages them.
func pager(t *testing.T, n int, calls *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		require.Positive(t, limit)
		var content []map[string]any
		for i := page * limit; i < min((page+1)*limit, n); i++ {
			content = append(content, map[string]any{"id": strconv.Itoa(i)})
		}
		pages := (n + limit - 1) / limit
		writeJSON(w, http.StatusOK, map[string]any{"content": content, "number": page, "size": limit,
			"totalElements": n, "totalPages": pages, "numberOfElements": len(content),
			"first": page == 0, "last": page >= pages-1, "empty": len(content) == 0})
	}
}

func TestIteratorsReadEveryPage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		n, limit  int
		wantCalls int32
	}{
		{name: "three pages, the last short", n: 25, limit: 10, wantCalls: 3},
		{name: "pages exactly full", n: 20, limit: 10, wantCalls: 2},
		{name: "one page", n: 3, limit: 10, wantCalls: 1},
		{name: "nothing", n: 0, limit: 10, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			c := serve(t, pager(t, tt.n, &calls))
			runs, err := client.Collect(c.WorkflowRuns(t.Context(), "infra", client.RunQuery{Limit: tt.limit}))
			require.NoError(t, err)
			require.Len(t, runs, tt.n)
			for i, r := range runs {
				assert.Equal(t, strconv.Itoa(i), r.ID)
			}
			assert.Equal(t, tt.wantCalls, calls.Load())
		})
	}
}

func TestIteratorStopsWhenTheLoopDoes(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	c := serve(t, pager(t, 100, &calls))
	seen := 0
	for _, err := range c.Teams(t.Context(), client.TeamQuery{Limit: 10}) {
		require.NoError(t, err)
		if seen++; seen == 15 {
			break
		}
	}
	assert.Equal(t, int32(2), calls.Load(), "no page is read past the one the loop stopped in")
}

func TestIteratorYieldsAnErrorOnceAndEnds(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	inner := pager(t, 30, &calls)
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "1" {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": 503, "reason": "SERVICE_UNAVAILABLE", "message": "down", "code": 1003, "path": r.URL.Path})
			return
		}
		inner(w, r)
	})
	var ids []string
	var errs []error
	for tok, err := range c.Tokens(t.Context(), client.TokenQuery{Limit: 10}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, tok.ID)
	}
	assert.Len(t, ids, 10)
	require.Len(t, errs, 1)
	assert.True(t, client.HasStatus(errs[0], 503))
}

// Watch, against a server without the run's stream, yields the first read, then each
// change, not the duration's growth, and ends with the ended run; a 503 on the way is
// waited through.
func TestWatchYieldsChangesUntilTheRunEnds(t *testing.T) {
	t.Parallel()
	states := []struct{ status, phase, task string }{
		{"ready", "pending", "notstarted"},
		{"running", "running", "running"},
		{"running", "running", "running"},
		{"", "", ""}, // a 503
		{"running", "running", "running"},
		{"running", "running", "succeeded"},
		{"succeeded", "completed", "succeeded"},
	}
	var reads atomic.Int32
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/watch") {
			writeJSON(w, http.StatusNotFound, map[string]any{"status": 404, "reason": "ROUTE_NOT_FOUND", "code": 1005, "message": "No endpoint.", "path": r.URL.Path})
			return
		}
		i := int(reads.Add(1)) - 1
		require.Less(t, i, len(states), "no read after the run ended")
		s := states[i]
		if s.status == "" {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": 503, "reason": "SERVICE_UNAVAILABLE", "code": 1003, "message": "down", "path": r.URL.Path})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": "r1", "status": s.status, "phase": s.phase, "duration": i * 1000,
			"tasks": []map[string]any{{"id": "r1.1", "name": "build", "status": s.task, "duration": i}}})
	})
	var seen []string
	for run, err := range c.Watch(t.Context(), "infra", "r1") {
		require.NoError(t, err)
		seen = append(seen, run.Status+"/"+run.Tasks[0].Status)
	}
	assert.Equal(t, []string{"ready/notstarted", "running/running", "running/succeeded", "succeeded/succeeded"}, seen)
}

func TestWatchEndsWithAnErrorThatIsNotPassing(t *testing.T) {
	t.Parallel()
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"status": 404, "reason": "WORKFLOWRUN_NOT_FOUND", "code": 1306, "message": "no", "path": r.URL.Path})
	})
	_, err := c.WaitForRun(t.Context(), "infra", "nope")
	assert.True(t, client.HasReason(err, "WORKFLOWRUN_NOT_FOUND"))
}

func TestWatchEndsWithItsContext(t *testing.T) {
	t.Parallel()
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"id": "r1", "status": "running", "phase": "running"})
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var errs []error
	for run, err := range c.Watch(ctx, "infra", "r1") {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		assert.Equal(t, "running", run.Status)
		cancel()
	}
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], context.Canceled)
}

// A followed log gives each line as the server writes it: the server writes the second
// line only once the first has been read.
func TestFollowedLogGivesLinesAsTheyAreWritten(t *testing.T) {
	t.Parallel()
	read := make(chan struct{})
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "true", r.URL.Query().Get("follow"))
		assert.Equal(t, "/api/v2/taskrun/r1.1/log", r.URL.Path)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		select {
		case <-read:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "second\n")
	})
	var lines []string
	for line, err := range c.TaskRunLogLines(t.Context(), "r1.1", true) {
		require.NoError(t, err)
		lines = append(lines, line)
		if len(lines) == 1 {
			close(read)
		}
	}
	assert.Equal(t, []string{"first", "second"}, lines)
}

// A stream cut short (the connection lost before the chunked body's end) is an error,
// not the log's end.
func TestFollowedLogCutShortIsAnError(t *testing.T) {
	t.Parallel()
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		require.NoError(t, err)
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nfirst\n\r\n")
		_ = buf.Flush()
	})
	rc, err := c.FollowTaskRunLog(t.Context(), "r1.1")
	require.NoError(t, err)
	defer rc.Close()
	s := bufio.NewScanner(rc)
	require.True(t, s.Scan())
	assert.Equal(t, "first", s.Text())
	assert.False(t, s.Scan())
	assert.ErrorIs(t, s.Err(), io.ErrUnexpectedEOF)
}

// SubmitAndWait submits with start=true and answers the run once it ended.
func TestSubmitAndWait(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	reads := 0
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method == http.MethodPost:
			assert.Equal(t, "true", r.URL.Query().Get("start"))
			writeJSON(w, http.StatusCreated, map[string]any{"id": "r9", "status": "running", "phase": "running"})
		case reads < 2:
			reads++
			writeJSON(w, http.StatusOK, map[string]any{"id": "r9", "status": "running", "phase": "running"})
		default:
			writeJSON(w, http.StatusOK, map[string]any{"id": "r9", "status": "failed", "phase": "completed", "statusMessage": "build failed"})
		}
	})
	run, err := c.SubmitAndWait(t.Context(), "infra", "deploy", nil)
	require.NoError(t, err)
	assert.Equal(t, "failed", run.Status)
	assert.False(t, run.Succeeded())
}

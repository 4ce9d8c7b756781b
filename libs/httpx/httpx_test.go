package httpx_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/page"
)

func do(t *testing.T, app *fiber.App, req *http.Request) (*http.Response, httpx.ErrorBody) {
	t.Helper()
	resp, err := app.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var body httpx.ErrorBody
	if resp.StatusCode >= 400 {
		require.NoError(t, json.Unmarshal(raw, &body), string(raw))
	}
	return resp, body
}

func TestErrorHandlerWritesTheContractShape(t *testing.T) {
	t.Parallel()
	app := httpx.NewApp(httpx.Config{Name: "test", BodyLimit: 64})
	app.Get("/team/:team", func(c *fiber.Ctx) error {
		return apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", c.Params("team"))
	})
	app.Get("/boom", func(*fiber.Ctx) error { return errors.New("secret database detail") })
	app.Get("/panic", func(*fiber.Ctx) error { panic("oops") })
	app.Get("/invalid", func(*fiber.Ctx) error {
		return apperr.Invalid(apperr.WorkflowInvalid, "The workflow is invalid.",
			apperr.FieldError{Field: "tasks[2].dependencies[0].taskRef", Message: "no task named 'lint'"})
	})
	app.Get("/limited", func(*fiber.Ctx) error {
		return apperr.New(apperr.RateLimited, "Slow down.").WithRetryAfter(1500 * time.Millisecond)
	})
	app.Post("/echo", func(c *fiber.Ctx) error {
		var v map[string]any
		if err := httpx.DecodeJSON(c, &v); err != nil {
			return err
		}
		return c.JSON(v)
	})
	app.Use(func(c *fiber.Ctx) error { return fiber.ErrNotFound })

	tests := []struct {
		name       string
		req        *http.Request
		wantStatus int
		wantReason string
		wantCode   int
	}{
		{"domain error", httptest.NewRequest(http.MethodGet, "/team/infra", nil), 404, "TEAM_NOT_FOUND", 1104},
		{"unknown error hides its cause", httptest.NewRequest(http.MethodGet, "/boom", nil), 500, "INTERNAL_ERROR", 1000},
		{"panic", httptest.NewRequest(http.MethodGet, "/panic", nil), 500, "INTERNAL_ERROR", 1000},
		{"validation", httptest.NewRequest(http.MethodGet, "/invalid", nil), 400, "WORKFLOW_INVALID", 1209},
		{"rate limited", httptest.NewRequest(http.MethodGet, "/limited", nil), 429, "RATE_LIMITED", 1021},
		{"no route", httptest.NewRequest(http.MethodGet, "/nowhere", nil), 404, "ROUTE_NOT_FOUND", 1005},
		{"malformed json", jsonReq(`{"a":`), 400, "REQUEST_INVALID", 1002},
		{"not json", func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/echo", strings.NewReader("a: b"))
			r.Header.Set("Content-Type", "application/x-yaml")
			return r
		}(), 415, "UNSUPPORTED_MEDIA_TYPE", 1004},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, body := do(t, app, tt.req)
			assert.Equal(t, tt.wantStatus, resp.StatusCode)
			assert.Equal(t, tt.wantStatus, body.Status)
			assert.Equal(t, http.StatusText(tt.wantStatus), body.Error)
			assert.Equal(t, tt.wantReason, body.Reason)
			assert.Equal(t, tt.wantCode, body.Code)
			assert.Equal(t, tt.req.URL.Path, body.Path)
			assert.NotEmpty(t, body.Message)
			assert.NotContains(t, body.Message, "secret")
			_, err := time.Parse(time.RFC3339, body.Timestamp)
			assert.NoError(t, err)
			assert.NotEmpty(t, resp.Header.Get(httpx.HeaderRequestID))
		})
	}

	resp, body := do(t, app, httptest.NewRequest(http.MethodGet, "/invalid", nil))
	require.Equal(t, 400, resp.StatusCode)
	assert.Equal(t, []apperr.FieldError{{Field: "tasks[2].dependencies[0].taskRef", Message: "no task named 'lint'"}}, body.Errors)
	resp, _ = do(t, app, httptest.NewRequest(http.MethodGet, "/limited", nil))
	assert.Equal(t, "2", resp.Header.Get("Retry-After"))
}

// The body limit is enforced by the server before any handler runs, so it is checked on a
// real listener: fiber's in-memory Test transport fails instead of answering.
func TestBodyLimitAnswersInTheContractShape(t *testing.T) {
	t.Parallel()
	app := httpx.NewApp(httpx.Config{Name: "test", BodyLimit: 64})
	app.Post("/echo", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusOK) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })

	resp, err := http.Post("http://"+ln.Addr().String()+"/echo", "application/json", strings.NewReader(strings.Repeat("x", 100)))
	require.NoError(t, err)
	defer resp.Body.Close()
	var body httpx.ErrorBody
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Equal(t, "REQUEST_TOO_LARGE", body.Reason)
	assert.Equal(t, 1003, body.Code)
}

// The read buffer bounds the request line and headers: beyond it, or beyond half of it for
// the URI, the answer is 431 or 414 in the contract's shape, never a 500; within it a long
// query (110 run ids) gets through.
func TestHeaderLimitsAnswerInTheContractShape(t *testing.T) {
	t.Parallel()
	app := httpx.NewApp(httpx.Config{Name: "test"})
	app.Get("/runs", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusOK) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })

	ids := strings.TrimSuffix(strings.Repeat("01a21374-a1a6-7106-9d9b-59805a107122,", 110), ",")
	tests := []struct {
		name       string
		target     string
		header     string
		wantStatus int
		wantReason string
	}{
		{"110 run ids", "/runs?workflowruns=" + ids, "", 200, ""},
		{"a header of 12 KiB", "/runs", "X-Big: " + strings.Repeat("b", 12<<10), 200, ""},
		{"a request URI over half the limit", "/runs?x=" + strings.Repeat("a", httpx.HeaderLimit/2), "", 414, "REQUEST_URI_TOO_LONG"},
		{"a request line over the limit", "/runs?x=" + strings.Repeat("a", httpx.HeaderLimit), "", 431, "REQUEST_HEADERS_TOO_LARGE"},
		{"a header over the limit", "/runs", "X-Big: " + strings.Repeat("b", httpx.HeaderLimit), 431, "REQUEST_HEADERS_TOO_LARGE"},
		{"many headers over the limit", "/runs", strings.Repeat("X-Many: "+strings.Repeat("m", 100)+"\r\n", 200) + "X-Last: 1", 431, "REQUEST_HEADERS_TOO_LARGE"},
		{"not HTTP", "/runs HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\nX:", "a", 400, "REQUEST_INVALID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := rawGet(t, ln.Addr().String(), tt.target, tt.header)
			require.Equal(t, tt.wantStatus, resp.StatusCode)
			if tt.wantReason == "" {
				return
			}
			var body httpx.ErrorBody
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
			assert.Equal(t, tt.wantStatus, body.Status)
			assert.Equal(t, tt.wantReason, body.Reason)
			assert.NotEmpty(t, body.Message)
		})
	}
}

func TestCheckDepth(t *testing.T) {
	t.Parallel()
	nest := func(n int) string { return strings.Repeat(`{"a":[`, n/2) + strings.Repeat(`]}`, n/2) }
	tests := []struct {
		name    string
		give    string
		wantErr bool
	}{
		{"flat", `{"a":1,"b":[1,2,{"c":"d"}]}`, false},
		{"at the limit", nest(httpx.MaxDepth), false},
		{"over the limit", nest(httpx.MaxDepth + 2), true},
		{"10,000 levels", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), true},
		{"brackets in strings", `{"a":"` + strings.Repeat("[{", 100) + `"}`, false},
		{"escaped quotes in strings", `{"a":"\\\"[[[[` + strings.Repeat("[", 100) + `"}`, false},
		{"siblings", strings.Repeat(`[1],`, 1000), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := httpx.CheckDepth([]byte(tt.give))
			if !tt.wantErr {
				require.NoError(t, err)
				return
			}
			assert.True(t, apperr.HasReason(err, apperr.RequestInvalid), "%v", err)
		})
	}

	// DecodeJSON refuses the same.
	app := httpx.NewApp(httpx.Config{Name: "test"})
	app.Post("/echo", func(c *fiber.Ctx) error {
		var v any
		return httpx.DecodeJSON(c, &v)
	})
	resp, body := do(t, app, jsonReq(nest(httpx.MaxDepth+2)))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "REQUEST_INVALID", body.Reason)
}

func jsonReq(body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/echo", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

// query runs fn on a request with the raw query and returns what it produced.
func query[T any](t *testing.T, rawQuery string, fn func(c *fiber.Ctx) (T, error)) (T, error) {
	t.Helper()
	app := fiber.New()
	var got T
	var gotErr error
	app.Get("/", func(c *fiber.Ctx) error {
		got, gotErr = fn(c)
		return nil
	})
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/?"+rawQuery, nil), -1)
	require.NoError(t, err)
	resp.Body.Close()
	return got, gotErr
}

func TestPaging(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		want    page.Request
		wantErr bool
	}{
		{"", page.Request{Number: 0, Size: 1000}, false},
		{"page=2&limit=10", page.Request{Number: 2, Size: 10}, false},
		{"limit=1000", page.Request{Size: 1000}, false},
		{"limit=1001", page.Request{}, true},
		{"limit=0", page.Request{}, true},
		{"page=-1", page.Request{}, true},
		{"page=x", page.Request{}, true},
		{"page=1000000&limit=1000", page.Request{Number: page.MaxNumber, Size: 1000}, false},
		{"page=1000001", page.Request{}, true},
		{"page=9223372036854775807", page.Request{}, true},
		{"page=99999999999999999999", page.Request{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			got, err := query(t, tt.give, func(c *fiber.Ctx) (page.Request, error) { return httpx.Paging(c, 1000) })
			if tt.wantErr {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, apperr.QueryInvalidFilters))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestLabelsAndLists(t *testing.T) {
	t.Parallel()
	labels, err := query(t, "labels=env%3Dprod,team%3Dinfra", func(c *fiber.Ctx) (map[string]string, error) { return httpx.Labels(c) })
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"env": "prod", "team": "infra"}, labels)

	_, err = query(t, "labels=novalue", func(c *fiber.Ctx) (map[string]string, error) { return httpx.Labels(c) })
	assert.True(t, apperr.HasReason(err, apperr.QueryInvalidFilters))

	dotted, err := query(t, "labels=app.kubernetes.io%2Fname%3Dweb", func(c *fiber.Ctx) (map[string]string, error) { return httpx.Labels(c) })
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"app.kubernetes.io/name": "web"}, dotted)
	// Keys that would be an operator or end a field name in a store's filter are input errors.
	for _, raw := range []string{"labels=a%00b%3Dc", "labels=%24where%3D1", "labels=a%2500b%253Dc", "labels=a%0Ab%3Dc", "labels=k%3Da%00b"} {
		_, err = query(t, raw, func(c *fiber.Ctx) (map[string]string, error) { return httpx.Labels(c) })
		assert.True(t, apperr.HasReason(err, apperr.QueryInvalidFilters), "%s: %v", raw, err)
	}

	list, _ := query(t, "statuses=active,+inactive,&statuses=x", func(c *fiber.Ctx) ([]string, error) { return httpx.List(c, "statuses"), nil })
	assert.Equal(t, []string{"active", "inactive", "x"}, list)
}

func TestDirectionAndSort(t *testing.T) {
	t.Parallel()
	desc, err := query(t, "order=desc", func(c *fiber.Ctx) (bool, error) { return httpx.Direction(c, "order", false) })
	require.NoError(t, err)
	assert.True(t, desc)
	_, err = query(t, "order=up", func(c *fiber.Ctx) (bool, error) { return httpx.Direction(c, "order", false) })
	assert.Error(t, err)

	sort, err := query(t, "", func(c *fiber.Ctx) (string, error) {
		return httpx.SortField(c, "sort", []string{"name", "creationDate"}, "name")
	})
	require.NoError(t, err)
	assert.Equal(t, "name", sort)
	_, err = query(t, "sort=password", func(c *fiber.Ctx) (string, error) {
		return httpx.SortField(c, "sort", []string{"name", "creationDate"}, "name")
	})
	assert.Error(t, err)
}

func TestEpochMillis(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		want    time.Time
		wantErr bool
	}{
		{"fromDate=1700000000000", time.UnixMilli(1700000000000).UTC(), false},
		{"fromDate=1700000000", time.Unix(1700000000, 0).UTC(), false},
		{"fromDate=yesterday", time.Time{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			got, err := query(t, tt.give, func(c *fiber.Ctx) (*time.Time, error) { return httpx.EpochMillis(c, "fromDate") })
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, *got)
		})
	}
	got, err := query(t, "", func(c *fiber.Ctx) (*time.Time, error) { return httpx.EpochMillis(c, "fromDate") })
	require.NoError(t, err)
	assert.Nil(t, got)
}

// rawGet sends GET target with the extra header lines to addr on a connection of its own,
// written byte for byte, and reads the answer. The server may answer before it has read
// everything (a head too large): writing goes on aside.
func rawGet(t *testing.T, addr, target, header string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	head := "GET " + target + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n"
	if header != "" {
		head += header + "\r\n"
	}
	go func() { _, _ = conn.Write([]byte(head + "\r\n")) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

package httpx_test

import (
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

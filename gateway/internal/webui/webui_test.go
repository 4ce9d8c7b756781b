package webui_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/andybalholm/brotli"
	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/webui"
	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/httpx"
)

const indexHTML = `<!doctype html><html><head><script type="module" src="/assets/index-abc123.js"></script></head><body><div id="root"></div></body></html>`

var bigJS = strings.Repeat("console.log('baton');\n", 200)

func testFS() fstest.MapFS {
	return fstest.MapFS{
		"index.html":              {Data: []byte(indexHTML)},
		"favicon.svg":             {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`)},
		"assets/index-abc123.js":  {Data: []byte(bigJS)},
		"assets/index-def456.css": {Data: []byte("body{margin:0}")},
	}
}

// newApp serves ui as the gateway does: an API route first, the UI, then the host's
// catch-all 404.
func newApp(t *testing.T, ui *webui.UI) *fiber.App {
	t.Helper()
	app := httpx.NewApp(httpx.Config{Name: "test", NoTracing: true})
	app.All("/api/v2/*", func(c *fiber.Ctx) error { return c.SendString("api") })
	ui.Routes(app)
	app.Use(func(c *fiber.Ctx) error {
		return apperr.New(apperr.RouteNotFound, "No endpoint %s %s.", c.Method(), c.Path())
	})
	return app
}

func do(t *testing.T, app *fiber.App, method, target string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := app.Test(req, -1)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp, body
}

func TestServe(t *testing.T) {
	t.Parallel()
	ui, err := webui.New(testFS())
	require.NoError(t, err)
	app := newApp(t, ui)

	tests := []struct {
		name       string
		method     string
		target     string
		wantStatus int
		wantBody   string // exact, when set
		wantType   string
		wantCache  string
		wantReason string // the contract's error reason, for errors
	}{
		{name: "the root is the page", method: "GET", target: "/", wantStatus: 200, wantBody: indexHTML, wantType: "text/html; charset=utf-8", wantCache: "no-cache"},
		{name: "index.html itself", method: "GET", target: "/index.html", wantStatus: 200, wantBody: indexHTML, wantCache: "no-cache"},
		{name: "a page of the UI is the page", method: "GET", target: "/teams/infra/runs?statuses=failed", wantStatus: 200, wantBody: indexHTML, wantCache: "no-cache"},
		{name: "a deep link with a dotted id is the page", method: "GET", target: "/teams/infra/runs/0193.2", wantStatus: 200, wantBody: indexHTML},
		{name: "a hashed asset is cached for a year", method: "GET", target: "/assets/index-abc123.js", wantStatus: 200, wantBody: bigJS, wantType: "text/javascript; charset=utf-8", wantCache: "public, max-age=31536000, immutable"},
		{name: "a top-level file is revalidated", method: "GET", target: "/favicon.svg", wantStatus: 200, wantType: "image/svg+xml", wantCache: "no-cache"},
		{name: "HEAD of the page", method: "HEAD", target: "/teams/infra/runs", wantStatus: 200, wantBody: "", wantType: "text/html; charset=utf-8"},
		{name: "a missing asset is a 404", method: "GET", target: "/assets/index-gone.js", wantStatus: 404, wantReason: "ROUTE_NOT_FOUND"},
		{name: "a missing top-level file is a 404", method: "GET", target: "/favicon.ico", wantStatus: 404, wantReason: "ROUTE_NOT_FOUND"},
		{name: "a path under none of the UI's roots is a 404", method: "GET", target: "/nowhere/at/all", wantStatus: 404, wantReason: "ROUTE_NOT_FOUND"},
		{name: "the operators' metrics are not the page on the public port", method: "GET", target: "/metrics", wantStatus: 404, wantReason: "ROUTE_NOT_FOUND"},
		{name: "sign-in is a page", method: "GET", target: "/signin?next=%2Fteams", wantStatus: 200, wantBody: indexHTML},
		{name: "the API keeps its paths", method: "GET", target: "/api/v2/team/query", wantStatus: 200, wantBody: "api"},
		{name: "an unknown API path is the contract's 404", method: "GET", target: "/api/v3/runs", wantStatus: 404, wantReason: "ROUTE_NOT_FOUND"},
		{name: "/api alone is the contract's 404", method: "GET", target: "/api", wantStatus: 404, wantReason: "ROUTE_NOT_FOUND"},
		{name: "a write to a page is the contract's 404", method: "POST", target: "/teams/infra/runs", wantStatus: 404, wantReason: "ROUTE_NOT_FOUND"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, body := do(t, app, tt.method, tt.target, nil)
			require.Equal(t, tt.wantStatus, resp.StatusCode, "%s", body)
			if tt.wantReason != "" {
				var e struct{ Reason string }
				require.NoError(t, json.Unmarshal(body, &e), "%s", body)
				assert.Equal(t, tt.wantReason, e.Reason)
				return
			}
			if tt.wantBody != "" || tt.method == "HEAD" {
				assert.Equal(t, tt.wantBody, string(body))
			}
			if tt.wantType != "" {
				assert.Equal(t, tt.wantType, resp.Header.Get("Content-Type"))
			}
			if tt.wantCache != "" {
				assert.Equal(t, tt.wantCache, resp.Header.Get("Cache-Control"))
			}
			if tt.target != "/api/v2/team/query" {
				for k, v := range webui.Headers {
					assert.Equal(t, v, resp.Header.Get(k), k)
				}
			}
		})
	}
}

func TestServeCompressed(t *testing.T) {
	t.Parallel()
	ui, err := webui.New(testFS())
	require.NoError(t, err)
	app := newApp(t, ui)

	decode := map[string]func([]byte) ([]byte, error){
		"gzip": func(b []byte) ([]byte, error) {
			r, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, err
			}
			return io.ReadAll(r)
		},
		"br": func(b []byte) ([]byte, error) { return io.ReadAll(brotli.NewReader(bytes.NewReader(b))) },
		"":   func(b []byte) ([]byte, error) { return b, nil },
	}
	tests := []struct {
		name     string
		accept   string
		target   string
		wantEnc  string
		wantBody string
	}{
		{name: "brotli first", accept: "gzip, deflate, br", target: "/assets/index-abc123.js", wantEnc: "br", wantBody: bigJS},
		{name: "gzip", accept: "gzip", target: "/assets/index-abc123.js", wantEnc: "gzip", wantBody: bigJS},
		{name: "brotli refused", accept: "br;q=0, gzip", target: "/assets/index-abc123.js", wantEnc: "gzip", wantBody: bigJS},
		{name: "none accepted", accept: "", target: "/assets/index-abc123.js", wantEnc: "", wantBody: bigJS},
		{name: "too small to compress", accept: "gzip, br", target: "/", wantEnc: "", wantBody: indexHTML},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, body := do(t, app, "GET", tt.target, map[string]string{"Accept-Encoding": tt.accept})
			require.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, tt.wantEnc, resp.Header.Get("Content-Encoding"))
			assert.Equal(t, "Accept-Encoding", resp.Header.Get("Vary"))
			plain, err := decode[tt.wantEnc](body)
			require.NoError(t, err)
			assert.Equal(t, tt.wantBody, string(plain))
		})
	}
}

func TestServeNotModified(t *testing.T) {
	t.Parallel()
	ui, err := webui.New(testFS())
	require.NoError(t, err)
	app := newApp(t, ui)

	first, _ := do(t, app, "GET", "/teams/infra/runs", nil)
	etag := first.Header.Get("ETag")
	require.NotEmpty(t, etag)
	again, body := do(t, app, "GET", "/", map[string]string{"If-None-Match": etag})
	assert.Equal(t, http.StatusNotModified, again.StatusCode)
	assert.Empty(t, body)
	other, _ := do(t, app, "GET", "/", map[string]string{"If-None-Match": `"other"`})
	assert.Equal(t, http.StatusOK, other.StatusCode)
}

func TestNewWithoutIndex(t *testing.T) {
	t.Parallel()
	_, err := webui.New(fstest.MapFS{"assets/a.js": {Data: []byte("x")}})
	require.ErrorContains(t, err, "index.html")
}

// TestDefault holds that the committed build is embedded and whole: its page loads only
// files the build has.
func TestDefault(t *testing.T) {
	t.Parallel()
	ui, err := webui.Default()
	require.NoError(t, err)
	app := newApp(t, ui)
	resp, page := do(t, app, "GET", "/", nil)
	require.Equal(t, 200, resp.StatusCode)
	refs := assetRef.FindAllStringSubmatch(string(page), -1)
	require.NotEmpty(t, refs, "the page names no asset:\n%s", page)
	for _, m := range refs {
		resp, _ := do(t, app, "GET", m[1], nil)
		assert.Equal(t, 200, resp.StatusCode, m[1])
	}
}

var assetRef = regexp.MustCompile(`(?:src|href)="(/assets/[^"]+)"`)

// firstLoadBudget bounds the JavaScript the page loads before any page of the UI, gzipped:
// pages, the designer and charts load on demand.
const firstLoadBudget = 300 << 10

// TestFirstLoadBudget holds that the scripts index.html loads weigh at most firstLoadBudget
// gzipped, as served.
func TestFirstLoadBudget(t *testing.T) {
	t.Parallel()
	ui, err := webui.Default()
	require.NoError(t, err)
	app := newApp(t, ui)
	_, page := do(t, app, "GET", "/", nil)
	total := 0
	for _, m := range assetRef.FindAllStringSubmatch(string(page), -1) {
		if !strings.HasSuffix(m[1], ".js") {
			continue
		}
		resp, body := do(t, app, "GET", m[1], map[string]string{"Accept-Encoding": "gzip"})
		require.Equal(t, 200, resp.StatusCode, m[1])
		require.Equal(t, "gzip", resp.Header.Get("Content-Encoding"), m[1])
		total += len(body)
	}
	require.Positive(t, total, "the page loads no script:\n%s", page)
	t.Logf("first load: %d KiB of JavaScript, gzipped", total>>10)
	assert.LessOrEqual(t, total, firstLoadBudget, "the first load grew past its budget: load what only some pages need with React.lazy")
}

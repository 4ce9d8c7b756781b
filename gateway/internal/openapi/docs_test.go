package openapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
)

func TestPageShowsTheWholeDocument(t *testing.T) {
	t.Parallel()
	doc, err := parse(Document())
	require.NoError(t, err)
	page, err := render(doc)
	require.NoError(t, err)
	html := string(page)

	for _, p := range doc.Paths {
		for _, o := range p.Value.Operations {
			assert.Contains(t, html, `id="`+o.OperationID+`"`, "%s %s", o.Method, p.Key)
		}
	}
	for _, s := range doc.Components.Schemas {
		assert.Contains(t, html, `id="schema-`+s.Key+`"`)
	}
	for _, r := range apperr.Catalogue {
		assert.Contains(t, html, "<code>"+r.Name+"</code>")
	}
	assert.NotContains(t, html, "<script", "the page needs no script")

	// Every link inside the page lands somewhere.
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`id="([^"]+)"`).FindAllStringSubmatch(html, -1) {
		assert.False(t, ids[m[1]], "id %q is used twice", m[1])
		ids[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`href="#([^"]+)"`).FindAllStringSubmatch(html, -1) {
		assert.True(t, ids[m[1]], "link to #%s goes nowhere", m[1])
	}
}

func TestMarkdown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, give, want string
	}{
		{name: "empty", give: "  ", want: ""},
		{name: "paragraphs", give: "one\ntwo\n\nthree", want: "<p>one two</p><p>three</p>"},
		{name: "one paragraph is bare", give: "one\ntwo", want: "one two"},
		{name: "code and strong", give: "**Names.** `a<b>`", want: "<strong>Names.</strong> <code>a&lt;b&gt;</code>"},
		{name: "escapes html", give: `<script>alert("x")</script>`, want: "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"},
		{name: "list with continued items", give: "- one\n  more\n- two", want: "<ul><li>one more</li><li>two</li></ul>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, string(markdown(tt.give)))
		})
	}
}

func TestEtagMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, header string
		want         bool
	}{
		{name: "none", header: "", want: false},
		{name: "same", header: `"abc"`, want: true},
		{name: "weak", header: `W/"abc"`, want: true},
		{name: "in a list", header: `"x", "abc"`, want: true},
		{name: "any", header: "*", want: true},
		{name: "other", header: `"abd"`, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, etagMatches(tt.header, `"abc"`))
		})
	}
}

func TestServe(t *testing.T) {
	t.Parallel()
	docs, err := New()
	require.NoError(t, err)
	app := fiber.New()
	app.Get(SpecPath, docs.ServeSpec)
	app.Get(DocsPath, docs.ServePage)

	send := func(method, path string, header map[string]string) (*http.Response, string) {
		t.Helper()
		req := httptest.NewRequest(method, path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := app.Test(req, -1)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(body)
	}

	tests := []struct {
		name, path, wantType, wantPrefix string
	}{
		{name: "the document", path: SpecPath, wantType: "application/yaml", wantPrefix: "openapi: 3.1.0"},
		{name: "the page", path: DocsPath, wantType: "text/html", wantPrefix: "<!DOCTYPE html>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, body := send(http.MethodGet, tt.path, nil)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), tt.wantType), resp.Header.Get("Content-Type"))
			assert.True(t, strings.HasPrefix(body, tt.wantPrefix))
			assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
			etag := resp.Header.Get("ETag")
			require.NotEmpty(t, etag)

			resp, body = send(http.MethodGet, tt.path, map[string]string{"If-None-Match": etag})
			assert.Equal(t, http.StatusNotModified, resp.StatusCode)
			assert.Empty(t, body)

			resp, body = send(http.MethodHead, tt.path, nil)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Empty(t, body)
		})
	}

	resp, _ := send(http.MethodGet, SpecPath, nil)
	assert.Empty(t, resp.Header.Get("Content-Security-Policy"))
	resp, _ = send(http.MethodGet, DocsPath, nil)
	csp := resp.Header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "'"+styleHash+"'", "the page's one style is allowed by its hash")
	assert.NotContains(t, csp, "script-src")
}

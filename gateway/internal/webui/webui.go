// Package webui serves Baton's web UI: the assets Vite builds from web/ into dist/ (committed,
// so that a clone serves the UI with nothing but Go; `make web` rebuilds them and `make test`
// checks they match the sources), embedded in the binary.
//
// Every GET or HEAD that no other route claims is answered from here, except under /api/,
// which stays the API's (an unknown API path answers the contract's 404): a file of the
// build when there is one, else, for the UI's own paths (/teams/infra/runs, under the roots
// of pageRoots), index.html, so that they are deep links; any other path is the contract's 404. Hashed assets under /assets/ never change and are cached for a year;
// everything else is revalidated (no-cache, with an ETag). A missing asset, or a missing
// file at the top level (/favicon.ico), is a 404 in the contract's shape rather than the page.
// Text is sent gzip- or brotli-compressed when the client accepts it, compressed once per
// file on first use. Every answer carries the security headers of Headers.
package webui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/baton-flow/baton/libs/apperr"
)

//go:embed all:dist
var dist embed.FS

// CSP is the Content-Security-Policy of the UI: scripts, styles, fonts and calls from this
// origin only (the build has no inline script); inline styles are allowed because the
// component library sets CSS variables in style attributes and a style element; images may
// be data: URIs (the library's icons in CSS). No framing, no plugins, no <base>.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Headers are set on every answer of the UI (with the UI's own Content-Security-Policy when
// AllowConnect widened it).
var Headers = map[string]string{
	"Content-Security-Policy": CSP,
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "same-origin",
	"X-Frame-Options":         "DENY",
}

const (
	cacheImmutable  = "public, max-age=31536000, immutable"
	cacheRevalidate = "no-cache"
	// minCompress is the smallest body worth compressing.
	minCompress = 1024
)

// UI answers the web UI's paths from one build.
type UI struct {
	files map[string]*file
	index *file
	csp   string
}

type file struct {
	body      []byte
	ctype     string
	etag      string
	immutable bool
	compress  bool

	gzipOnce, brOnce sync.Once
	gzip, br         []byte
}

// Default is the UI built into this binary (dist/).
func Default() (*UI, error) {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		return nil, fmt.Errorf("webui: %w", err)
	}
	return New(sub)
}

// New reads a build from fsys, whose root holds index.html and the assets.
func New(fsys fs.FS) (*UI, error) {
	u := &UI{files: map[string]*file{}, csp: CSP}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ctype := mime.TypeByExtension(path.Ext(name))
		if ctype == "" {
			ctype = http.DetectContentType(body)
		}
		u.files["/"+name] = &file{
			body:      body,
			ctype:     ctype,
			etag:      `"` + hex.EncodeToString(sum[:12]) + `"`,
			immutable: strings.HasPrefix(name, "assets/"),
			compress:  len(body) >= minCompress && compressible(ctype),
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("webui: read the build: %w", err)
	}
	u.index = u.files["/index.html"]
	if u.index == nil {
		return nil, errors.New("webui: the build has no index.html (make web builds it)")
	}
	return u, nil
}

func compressible(ctype string) bool {
	for _, p := range []string{"text/", "application/javascript", "application/json", "image/svg+xml", "application/manifest+json"} {
		if strings.HasPrefix(ctype, p) {
			return true
		}
	}
	return false
}

// AllowConnect lets the UI's pages call origin (scheme://host[:port]) besides their own, as
// the OpenID Connect sign-in calls its issuer's discovery document and token endpoint. It
// widens connect-src only; call it before serving. An origin that is not an http(s)
// scheme and host is refused, so nothing else can be written into the policy.
func (u *UI) AllowConnect(origin string) error {
	if !validOrigin.MatchString(origin) {
		return fmt.Errorf("webui: %q is not an origin such as https://login.example.com", origin)
	}
	u.csp = strings.Replace(u.csp, "connect-src 'self'", "connect-src 'self' "+origin, 1)
	return nil
}

var validOrigin = regexp.MustCompile(`^https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$`)

// CSP is the Content-Security-Policy the UI answers with.
func (u *UI) CSP() string { return u.csp }

// Routes answers GET and HEAD of every path not claimed before it; register it last.
func (u *UI) Routes(r fiber.Router) {
	r.Get("/*", u.serve)
}

func (u *UI) serve(c *fiber.Ctx) error {
	p := c.Path()
	if p == "/api" || strings.HasPrefix(p, "/api/") {
		return c.Next()
	}
	f := u.files[p]
	if f == nil {
		if p == "/" || isPage(p) {
			f = u.index
		} else {
			return apperr.New(apperr.RouteNotFound, "No endpoint %s %s.", c.Method(), p)
		}
	}
	for k, v := range Headers {
		c.Set(k, v)
	}
	c.Set(fiber.HeaderContentSecurityPolicy, u.csp)
	c.Set(fiber.HeaderContentType, f.ctype)
	c.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	c.Set(fiber.HeaderETag, f.etag)
	if f.immutable {
		c.Set(fiber.HeaderCacheControl, cacheImmutable)
	} else {
		c.Set(fiber.HeaderCacheControl, cacheRevalidate)
	}
	if match := c.Get(fiber.HeaderIfNoneMatch); match != "" && etagMatches(match, f.etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	body := f.body
	if f.compress {
		switch enc := encoding(c.Get(fiber.HeaderAcceptEncoding)); enc {
		case "br":
			f.brOnce.Do(func() { f.br = fasthttp.AppendBrotliBytesLevel(nil, f.body, fasthttp.CompressBrotliDefaultCompression) })
			body = f.br
			c.Set(fiber.HeaderContentEncoding, enc)
		case "gzip":
			f.gzipOnce.Do(func() { f.gzip = fasthttp.AppendGzipBytesLevel(nil, f.body, fasthttp.CompressBestCompression) })
			body = f.gzip
			c.Set(fiber.HeaderContentEncoding, enc)
		}
	}
	return c.Send(body)
}

// pageRoots are the first segments of the UI's own paths (web/src/routes.tsx): a path
// outside the API under none of them (/metrics, /nowhere) is no page of the UI, and answers
// the contract's 404 rather than the page.
var pageRoots = map[string]bool{"signin": true, "teams": true, "admin": true}

// isPage says whether an unknown path is one of the UI's pages, which index.html serves.
func isPage(p string) bool {
	root, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return pageRoots[root] && !missingFile(p)
}

// missingFile says whether an unknown path names a file rather than a page of the UI: one
// under /assets/, or one at the top level with an extension (/favicon.ico). The UI's pages
// live deeper (/teams/infra/runs/<id>), where ids may hold dots.
func missingFile(p string) bool {
	if strings.HasPrefix(p, "/assets/") {
		return true
	}
	rest := strings.TrimPrefix(p, "/")
	return !strings.Contains(rest, "/") && strings.Contains(rest, ".")
}

// encoding picks brotli, else gzip, among what Accept-Encoding accepts (a q=0 refuses one).
func encoding(accept string) string {
	accepted := map[string]bool{}
	for _, part := range strings.Split(accept, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		accepted[name] = !(q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000")
	}
	for _, enc := range []string{"br", "gzip"} {
		if accepted[enc] {
			return enc
		}
	}
	return ""
}

func etagMatches(header, etag string) bool {
	if strings.TrimSpace(header) == "*" {
		return true
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag {
			return true
		}
	}
	return false
}

// Package openapi holds Baton's OpenAPI document — the /api/v2 contract, with the decisions
// the customer's interface left open — and serves it from the gateway, with a page that
// renders it for reading.
//
// The document is written by hand (openapi.yaml) and embedded. Its tests keep it honest
// against the code: every route of the gateway's routing table is in it with the same
// method, open routes are open in it, compatibility routes are deprecated, body limits and
// the error catalogue (libs/apperr) agree.
package openapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
)

// Where the gateway serves the document and its rendering. Both are open (API.md §2) and
// are answered by the gateway itself, never proxied.
const (
	SpecPath = "/api/v2/openapi.yaml"
	DocsPath = "/api/v2/docs"
	// AuthConfigPath is where the gateway tells browsers how to sign in (its OpenID Connect
	// issuer and client, when one is configured); open, and answered by the gateway itself.
	AuthConfigPath = "/api/v2/auth/config"
)

// ServedBy is the `x-served-by` value of the operations the gateway answers itself; they
// are not in the routing table, which lists what is proxied.
const ServedBy = "gateway"

//go:embed openapi.yaml
var spec []byte

// Document returns a copy of the OpenAPI document, as YAML.
func Document() []byte { return bytes.Clone(spec) }

// Docs serves the document and the page rendering it. Both are built once, by New.
type Docs struct {
	spec asset
	page asset
}

// asset is a fixed response body with its validator.
type asset struct {
	body        []byte
	contentType string
	etag        string
	// csp, when set, is the page's Content-Security-Policy.
	csp string
}

func newAsset(body []byte, contentType string) asset {
	sum := sha256.Sum256(body)
	return asset{body: body, contentType: contentType, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`}
}

// New returns the Docs of the embedded document. The document is parsed and its page
// rendered once per process (it takes tens of milliseconds) and shared: Docs never
// changes. It fails only if the document is broken, which the package's tests rule out.
func New() (*Docs, error) { return build() }

var build = sync.OnceValues(func() (*Docs, error) {
	doc, err := parse(spec)
	if err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	page, err := render(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: render the docs page: %w", err)
	}
	d := &Docs{
		spec: newAsset(spec, "application/yaml; charset=utf-8"),
		page: newAsset(page, fiber.MIMETextHTMLCharsetUTF8),
	}
	// The page is self-contained: no script at all, and only its own inline style.
	d.page.csp = "default-src 'none'; style-src '" + styleHash + "'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	return d, nil
})

// ServeSpec answers GET and HEAD of SpecPath with the document.
func (d *Docs) ServeSpec(c *fiber.Ctx) error { return d.spec.serve(c) }

// ServePage answers GET and HEAD of DocsPath with the rendered page.
func (d *Docs) ServePage(c *fiber.Ctx) error { return d.page.serve(c) }

func (a *asset) serve(c *fiber.Ctx) error {
	c.Set(fiber.HeaderETag, a.etag)
	// Revalidated on every use: the document changes with each release, and a 304 is cheap.
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	if a.csp != "" {
		c.Set(fiber.HeaderContentSecurityPolicy, a.csp)
	}
	if etagMatches(c.Get(fiber.HeaderIfNoneMatch), a.etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, a.contentType)
	return c.Send(a.body)
}

// etagMatches reports whether an If-None-Match header names etag (weak comparison, as
// RFC 9110 asks for If-None-Match).
func etagMatches(header, etag string) bool {
	for _, candidate := range strings.Split(header, ",") {
		candidate = strings.TrimPrefix(strings.TrimSpace(candidate), "W/")
		if candidate == "*" || candidate == etag {
			return true
		}
	}
	return false
}

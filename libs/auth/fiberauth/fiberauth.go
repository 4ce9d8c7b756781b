// Package fiberauth is the Fiber adapter of package auth: it reads a caller's credential
// from a request and admits service requests whose signed principal headers verify, putting
// the principal into the request's user context. Package auth itself stays free of Fiber so
// that application code can use the principal contract without the HTTP framework.
package fiberauth

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

// Credential returns the token a request presents: `Authorization: Bearer`, then
// `x-access-token`, then, when allowQuery is set (webhook, event and callback paths only),
// the `access_token` query parameter.
func Credential(c *fiber.Ctx, allowQuery bool) string {
	if h := c.Get(fiber.HeaderAuthorization); h != "" {
		if scheme, tok, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "bearer") {
			return strings.TrimSpace(tok)
		}
	}
	if tok := c.Get(auth.HeaderToken); tok != "" {
		return strings.TrimSpace(tok)
	}
	if allowQuery {
		return c.Query("access_token")
	}
	return ""
}

// Middleware authenticates service requests: the principal headers must verify with s and
// name an authenticated caller, else 401. The principal is put into the request's user
// context, where auth.FromContext and auth.Require find it.
func Middleware(s *auth.Signer) fiber.Handler { return middleware(s, false) }

// OpenMiddleware is Middleware for open endpoints: it also admits auth.Anonymous.
func OpenMiddleware(s *auth.Signer) fiber.Handler { return middleware(s, true) }

func middleware(s *auth.Signer, allowAnonymous bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, err := s.Decode(c.Get(auth.HeaderPrincipal), c.Get(auth.HeaderSignature))
		if err != nil {
			return err
		}
		if p.Type == auth.TypeAnonymous && !allowAnonymous {
			return apperr.New(apperr.Unauthenticated, "Authentication is required.")
		}
		c.SetUserContext(auth.WithPrincipal(c.UserContext(), p))
		return c.Next()
	}
}

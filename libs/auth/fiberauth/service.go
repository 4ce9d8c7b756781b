package fiberauth

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/auth"
)

// ServiceOnly admits requests whose verified principal is one of Baton's own services
// (auth.RequireService) and answers 403 PERMISSION_DENIED to any other. It goes on the
// /internal/v1 group, after the middleware that verifies the signed principal.
func ServiceOnly() fiber.Handler {
	return func(c *fiber.Ctx) error {
		if _, err := auth.RequireService(c.UserContext()); err != nil {
			return err
		}
		return c.Next()
	}
}

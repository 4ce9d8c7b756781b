package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
)

// codehostEvent is the event name of a code-host delivery: the contract's X-Host-Event,
// or the vendor's own header.
func codehostEvent(c *fiber.Ctx) string {
	for _, h := range []string{"X-Host-Event", "X-GitHub-Event"} {
		if v := c.Get(h); v != "" {
			return v
		}
	}
	return ""
}

func (h *handlers) codehostDelivery(c *fiber.Ctx) error     { return notBuilt(c) }
func (h *handlers) integrations(c *fiber.Ctx) error         { return notBuilt(c) }
func (h *handlers) codehostInstallation(c *fiber.Ctx) error { return notBuilt(c) }
func (h *handlers) codehostLink(c *fiber.Ctx) error         { return notBuilt(c) }
func (h *handlers) codehostUnlink(c *fiber.Ctx) error       { return notBuilt(c) }

func notBuilt(c *fiber.Ctx) error {
	return apperr.New(apperr.RouteNotFound, "No route for %s %s.", c.Method(), c.Path())
}

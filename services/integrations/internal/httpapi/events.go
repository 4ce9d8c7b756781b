package httpapi

import (
	"github.com/gofiber/fiber/v2"
)

func (h *handlers) event(c *fiber.Ctx) error        { return notBuilt(c) }
func (h *handlers) plainWebhook(c *fiber.Ctx) error { return notBuilt(c) }

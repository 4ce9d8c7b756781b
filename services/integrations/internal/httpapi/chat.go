package httpapi

import (
	"github.com/gofiber/fiber/v2"
)

// headerChatSignature carries the chat platform's signature of a request.
const headerChatSignature = "x-chat-signature"

func (h *handlers) chatInstall(c *fiber.Ctx) error       { return notBuilt(c) }
func (h *handlers) chatAuth(c *fiber.Ctx) error          { return notBuilt(c) }
func (h *handlers) chatCommands(c *fiber.Ctx) error      { return notBuilt(c) }
func (h *handlers) chatEvents(c *fiber.Ctx) error        { return notBuilt(c) }
func (h *handlers) chatInteractivity(c *fiber.Ctx) error { return notBuilt(c) }

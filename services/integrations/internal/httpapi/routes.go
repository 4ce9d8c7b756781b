// Package httpapi is the integrations service's HTTP transport: parse, verify, call the
// use case, render.
package httpapi

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/services/integrations/internal/app"
)

// Areas are the use cases behind the endpoints.
type Areas struct {
	Events   *app.Events
	CodeHost *app.CodeHost
	Chat     *app.Chat
	Now      func() time.Time
}

type handlers struct {
	Areas
}

// Routes registers the service's endpoints on r (/api/v2), whose middleware admits the
// anonymous principal: chat requests and code-host deliveries are verified by their
// signatures and the install landings by a signed state, here; the other endpoints
// require credentials themselves.
func Routes(r fiber.Router, a Areas) {
	h := &handlers{Areas: a}
	r.Post("/event", h.event)
	r.Post("/webhook", h.webhook)
	r.Get("/integration", h.integrations)
	r.Get("/integration/codehost/installation", h.codehostInstallation)
	r.Post("/integration/codehost/link", h.codehostLink)
	r.Post("/integration/codehost/unlink", h.codehostUnlink)
	r.Get("/integration/chat/install", h.chatInstall)
	r.Get("/integration/chat/auth", h.chatAuth)
	r.Post("/integration/chat/commands", h.chatCommands)
	r.Post("/integration/chat/events", h.chatEvents)
	r.Post("/integration/chat/interactivity", h.chatInteractivity)
}

// webhook tells its three kinds of sender apart by their headers (API.md §7): a chat
// event carries the chat platform's signature, a code-host delivery its event name; any
// other is a plain webhook naming its workflow.
func (h *handlers) webhook(c *fiber.Ctx) error {
	switch {
	case c.Get(headerChatSignature) != "":
		return h.chatEvents(c)
	case codehostEvent(c) != "":
		return h.codehostDelivery(c)
	}
	return h.plainWebhook(c)
}

package httpapi

import (
	"bytes"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/services/identity/internal/app"
)

// activationHandlers serve PUT /activate and the gateway's activation check.
type activationHandlers struct {
	activation *app.Activation
}

// ActivationRoutes registers PUT /activate on r behind open, the middleware that also
// admits the anonymous principal: a locked installation must be able to unlock itself,
// before anyone has credentials. r must not authenticate callers itself.
func ActivationRoutes(r fiber.Router, open fiber.Handler, activation *app.Activation) {
	h := &activationHandlers{activation: activation}
	r.Put("/activate", open, h.activate)
}

// ActivationInternalRoutes registers, on r (under /internal/v1, admitting only Baton's
// services):
//
//	GET /activation
//	  200 identityapi.ActivationState: whether the installation is unlocked; the gateway answers
//	  423 INSTANCE_LOCKED to everything but its open routes while it is not.
func ActivationInternalRoutes(r fiber.Router, activation *app.Activation) {
	h := &activationHandlers{activation: activation}
	r.Get(identityapi.ActivationRoute, h.state)
}

// OneTimeCode is the optional body of PUT /activate.
type OneTimeCode struct {
	OTC *string `json:"otc"`
}

// activate unlocks with the code and answers true; without a body (or without `otc`) it
// answers the current state, true or false.
func (h *activationHandlers) activate(c *fiber.Ctx) error {
	var req OneTimeCode
	if len(bytes.TrimSpace(c.Body())) > 0 {
		if err := httpx.DecodeJSON(c, &req); err != nil {
			return err
		}
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	if req.OTC == nil {
		ok, err := h.activation.Activated(c.UserContext())
		if err != nil {
			return err
		}
		return c.JSON(ok)
	}
	ok, err := h.activation.Activate(c.UserContext(), *req.OTC)
	if err != nil {
		return err
	}
	return c.JSON(ok)
}

func (h *activationHandlers) state(c *fiber.Ctx) error {
	ok, err := h.activation.ActivatedForService(c.UserContext())
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(identityapi.ActivationState{Activated: ok})
}

package httpapi

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// codehostEvent is the event name of a code-host delivery: the contract's X-Host-Event,
// or the vendor's own header.
func codehostEvent(c *fiber.Ctx) string { return firstHeader(c, "X-Host-Event", "X-GitHub-Event") }

// firstHeader is the value of the first of names the request carries.
func firstHeader(c *fiber.Ctx, names ...string) string {
	for _, h := range names {
		if v := c.Get(h); v != "" {
			return v
		}
	}
	return ""
}

// codehostDelivery handles a delivery of the code host's webhook. The signature covers
// the body exactly as sent, so the raw request body is verified, never a decoded one.
func (h *handlers) codehostDelivery(c *fiber.Ctx) error {
	res, err := h.CodeHost.Deliver(c.UserContext(), app.Delivery{
		Event:     codehostEvent(c),
		ID:        firstHeader(c, "X-Host-Delivery", "X-GitHub-Delivery"),
		Signature: firstHeader(c, "X-Host-Signature-256", "X-Hub-Signature-256"),
		Body:      c.Request().Body(),
	})
	if err != nil {
		return err
	}
	return c.JSON(res)
}

func (h *handlers) integrations(c *fiber.Ctx) error {
	list, err := h.CodeHost.Integrations(c.UserContext(), c.Query("team"))
	if err != nil {
		return err
	}
	return c.JSON(list)
}

// codehostInstallation is the install flow's landing. The code host names the
// installation `installation_id` (and adds `setup_action`); v4 links named it `id`.
// Without an installation id and with a team, it answers the team's linked installation,
// as v4's Configure tab asks for it.
func (h *handlers) codehostInstallation(c *fiber.Ctx) error {
	raw := firstQuery(c, "id", "installation_id")
	if team := c.Query("team"); raw == "" && team != "" && c.Query("state") == "" {
		in, err := h.CodeHost.TeamInstallation(c.UserContext(), team)
		if err != nil {
			return err
		}
		return c.JSON(in)
	}
	id, ok := domain.ParseInstallationID(raw)
	if !ok {
		return apperr.Invalid(apperr.RequestInvalid, "The installation id (id or installation_id) must be a positive integer.",
			apperr.FieldError{Field: "id", Message: "must be a positive integer"})
	}
	link, err := h.CodeHost.Land(c.UserContext(), id, c.Query("team"), c.Query("state"))
	if err != nil {
		return err
	}
	return c.JSON(link)
}

func firstQuery(c *fiber.Ctx, names ...string) string {
	for _, n := range names {
		if v := c.Query(n); v != "" {
			return v
		}
	}
	return ""
}

// linkRequest is CodeHostLinkRequest. The installation id is read as a JSON number or a
// string of digits: v4 clients sent a number, and forms send text.
type linkRequest struct {
	InstallationID json.Number `json:"installationId"`
	Team           string      `json:"team"`
}

func parseLink(c *fiber.Ctx) (int64, string, error) {
	var req linkRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		return 0, "", err
	}
	var bad []apperr.FieldError
	id, ok := domain.ParseInstallationID(req.InstallationID)
	if !ok {
		bad = append(bad, apperr.FieldError{Field: "installationId", Message: "must be a positive integer"})
	}
	if req.Team == "" {
		bad = append(bad, apperr.FieldError{Field: "team", Message: "required"})
	}
	if len(bad) > 0 {
		return 0, "", apperr.Invalid(apperr.RequestInvalid, "The link request is not valid.", bad...)
	}
	return id, req.Team, nil
}

func (h *handlers) codehostLink(c *fiber.Ctx) error {
	id, team, err := parseLink(c)
	if err != nil {
		return err
	}
	link, err := h.CodeHost.Link(c.UserContext(), id, team)
	if err != nil {
		return err
	}
	return c.JSON(link)
}

func (h *handlers) codehostUnlink(c *fiber.Ctx) error {
	id, team, err := parseLink(c)
	if err != nil {
		return err
	}
	if err := h.CodeHost.Unlink(c.UserContext(), id, team); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func notBuilt(c *fiber.Ctx) error {
	return apperr.New(apperr.RouteNotFound, "No route for %s %s.", c.Method(), c.Path())
}

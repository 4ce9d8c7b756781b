package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/workflowid"
	"github.com/baton-flow/baton/services/workflows/internal/app"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

func templateLocation(w domain.Workflow) string { return "/api/v2/workflowtemplate/" + w.Name }

func (h *handlers) createTemplate(c *fiber.Ctx) error {
	var body domain.Workflow
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	w, err := h.templates.Create(c.UserContext(), body)
	if err != nil {
		return err
	}
	return httpx.Created(c, templateLocation(w), w)
}

func (h *handlers) putTemplate(c *fiber.Ctx) error {
	replace, err := httpx.Bool(c, "replace", false)
	if err != nil {
		return err
	}
	dryRun, err := httpx.Bool(c, "dryRun", false)
	if err != nil {
		return err
	}
	var body domain.Workflow
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	w, created, err := h.templates.Put(c.UserContext(), body, app.PutMode{Replace: replace, DryRun: dryRun})
	if err != nil {
		return err
	}
	if created {
		return httpx.Created(c, templateLocation(w), w)
	}
	return c.JSON(w)
}

func (h *handlers) getTemplate(c *fiber.Ctx) error {
	v, err := version(c)
	if err != nil {
		return err
	}
	withTasks, err := httpx.Bool(c, "withTasks", true)
	if err != nil {
		return err
	}
	w, err := h.templates.Get(c.UserContext(), templateName(c), v, withTasks)
	if err != nil {
		return err
	}
	return c.JSON(w)
}

func (h *handlers) deleteTemplate(c *fiber.Ctx) error {
	if err := h.templates.Delete(c.UserContext(), templateName(c)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h *handlers) queryTemplates(c *fiber.Ctx) error {
	p, f, err := querySpec(c)
	if err != nil {
		return err
	}
	f.Names = httpx.List(c, "names")
	res, err := h.templates.Query(c.UserContext(), f, p)
	if err != nil {
		return err
	}
	return c.JSON(res)
}

// templateName reads the `{name}` of a template path: its name, or its id.
func templateName(c *fiber.Ctx) string { return workflowid.Resolve("", param(c, "name")) }

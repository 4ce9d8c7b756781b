package httpapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/workflows/internal/app"
)

// InternalRoutes registers the endpoints Baton's own services call, on r (/internal/v1),
// which already verifies the signed principal:
//
//	GET /internal/v1/teams/{team}/usage  → {"currentWorkflowCount": n}        (identity)
//	GET /internal/v1/task-usage?ref=<team>/<task>|<task> → {"workflows": [...]} (tasks)
//	GET /internal/v1/teams/{team}/workflows/{name}?version=n → the version, secrets unmasked (runs)
func InternalRoutes(r fiber.Router, workflows *app.Workflows) {
	h := &handlers{workflows: workflows}
	r.Use(requireService)
	r.Get("/teams/:team/usage", h.teamUsage)
	r.Get("/task-usage", h.taskUsage)
	r.Get("/teams/:team/workflows/:name", h.snapshot)
}

func (h *handlers) snapshot(c *fiber.Ctx) error {
	v, err := version(c)
	if err != nil {
		return err
	}
	w, err := h.workflows.Snapshot(c.UserContext(), c.Params("team"), c.Params("name"), v)
	if err != nil {
		return err
	}
	return c.JSON(w)
}

func requireService(c *fiber.Ctx) error {
	if p, ok := auth.FromContext(c.UserContext()); !ok || p.Type != auth.TypeService {
		return apperr.New(apperr.PermissionDenied, "Only Baton's own services may call %s.", c.Path())
	}
	return c.Next()
}

func (h *handlers) teamUsage(c *fiber.Ctx) error {
	n, err := h.workflows.WorkflowCount(c.UserContext(), c.Params("team"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"currentWorkflowCount": n})
}

func (h *handlers) taskUsage(c *fiber.Ctx) error {
	ref := c.Query("ref")
	team, _, ok := strings.Cut(ref, "/")
	if !ok || team == "" {
		return apperr.New(apperr.RequestInvalid, "ref must name a team task as <team>/<task>, got %q.", ref)
	}
	names, err := h.workflows.TaskUsage(c.UserContext(), team, ref)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"workflows": names})
}

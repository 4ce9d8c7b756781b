package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/services/tasks/internal/app"
	"github.com/baton-flow/baton/services/tasks/internal/taskjson"
)

func (h *handlers) resolve(c *fiber.Ctx) error {
	ref, err := app.ParseRef(c.Query("ref"))
	if err != nil {
		return err
	}
	v, err := version(c)
	if err != nil {
		return err
	}
	t, err := h.tasks.Resolve(c.UserContext(), ref, v)
	if err != nil {
		return err
	}
	// The contract's answer is the API's Task body itself.
	return c.JSON(taskjson.FromDomain(t))
}

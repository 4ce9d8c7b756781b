package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/tasksapi"
	"github.com/baton-flow/baton/services/tasks/internal/app"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
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
	return c.JSON(resolved(t))
}

// resolved is t as the resolve contract answers it: the API's Task body (taskjson), in the
// contract's types, so its bytes are those of the public read.
func resolved(t domain.Task) tasksapi.Task {
	w := taskjson.FromDomain(t)
	out := tasksapi.Task{
		Name: w.Name, DisplayName: w.DisplayName, Description: w.Description, Type: w.Type,
		Version: w.Version, Status: w.Status, Scope: w.Scope, Team: w.Team, CreationDate: w.CreationDate,
		Category: w.Category, Icon: w.Icon, Verified: w.Verified, Labels: w.Labels,
		Annotations: w.Annotations, Extra: w.Extra,
	}
	if c := w.Changelog; c != nil {
		out.Changelog = &tasksapi.Changelog{Version: c.Version, Author: c.Author, Reason: c.Reason, Date: c.Date}
	}
	s := w.Spec
	out.Spec = tasksapi.Spec{
		Image: s.Image, Command: s.Command, Arguments: s.Arguments, Script: s.Script,
		WorkingDir: s.WorkingDir, Params: s.Params, StepName: s.StepName, Extra: s.Extra,
	}
	for _, e := range s.Envs {
		out.Spec.Envs = append(out.Spec.Envs, tasksapi.Env(e))
	}
	for _, r := range s.Results {
		out.Spec.Results = append(out.Spec.Results, tasksapi.Result{Name: r.Name, Description: r.Description, Type: r.Type, Extra: r.Extra})
	}
	for _, ws := range s.Workspaces {
		out.Spec.Workspaces = append(out.Spec.Workspaces, tasksapi.Workspace(ws))
	}
	return out
}

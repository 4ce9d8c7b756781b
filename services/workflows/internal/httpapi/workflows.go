package httpapi

import (
	"fmt"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/workflowid"
	"github.com/baton-flow/baton/services/workflows/internal/app"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// param reads a path parameter, unescaped (`team%2Fname` on the team-less export).
func param(c *fiber.Ctx, name string) string {
	v, err := url.PathUnescape(c.Params(name))
	if err != nil {
		return c.Params(name)
	}
	return v
}

// workflowName reads the `{name}` of a team workflow path: its name, or its id as v4
// clients send it.
func workflowName(c *fiber.Ctx) string {
	return workflowid.Resolve(param(c, "team"), param(c, "name"))
}

// version reads `?version=`: 0 (the latest) when absent, else 1 or more.
func version(c *fiber.Ctx) (int, error) {
	v, err := httpx.Int(c, "version", 0)
	if err != nil {
		return 0, err
	}
	if c.Query("version") != "" && v < 1 {
		e := apperr.New(apperr.QueryInvalidFilters, "version must be 1 or more, got %d.", v)
		e.Fields = []apperr.FieldError{{Field: "version", Message: e.Message}}
		return 0, e
	}
	return v, nil
}

// querySpec reads the paging, `sort` (the direction on creationDate, ascending by default)
// and `labels` of a query.
func querySpec(c *fiber.Ctx) (page.Request, domain.Filter, error) {
	p, err := httpx.Paging(c, page.MaxSize)
	if err != nil {
		return page.Request{}, domain.Filter{}, err
	}
	if p.Desc, err = httpx.Direction(c, "sort", false); err != nil {
		return page.Request{}, domain.Filter{}, err
	}
	p.Sort = "creationDate"
	var f domain.Filter
	if f.Labels, err = httpx.Labels(c); err != nil {
		return page.Request{}, domain.Filter{}, err
	}
	return p, f, nil
}

func workflowLocation(w domain.Workflow) string {
	return "/api/v2/team/" + w.Team + "/workflow/" + w.Name
}

func (h *handlers) createWorkflow(c *fiber.Ctx) error {
	var body domain.Workflow
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	w, err := h.workflows.Create(c.UserContext(), param(c, "team"), body)
	if err != nil {
		return err
	}
	return httpx.Created(c, workflowLocation(w), w)
}

func (h *handlers) putWorkflow(c *fiber.Ctx) error {
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
	w, created, err := h.workflows.Put(c.UserContext(), param(c, "team"), body, app.PutMode{Replace: replace, DryRun: dryRun})
	if err != nil {
		return err
	}
	if created {
		return httpx.Created(c, workflowLocation(w), w)
	}
	return c.JSON(w)
}

func (h *handlers) getWorkflow(c *fiber.Ctx) error {
	v, err := version(c)
	if err != nil {
		return err
	}
	withTasks, err := httpx.Bool(c, "withTasks", true)
	if err != nil {
		return err
	}
	w, err := h.workflows.Get(c.UserContext(), param(c, "team"), workflowName(c), v, withTasks)
	if err != nil {
		return err
	}
	return c.JSON(w)
}

func (h *handlers) deleteWorkflow(c *fiber.Ctx) error {
	force, err := httpx.Bool(c, "force", false)
	if err != nil {
		return err
	}
	if err := h.workflows.Delete(c.UserContext(), param(c, "team"), workflowName(c), force); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h *handlers) duplicateWorkflow(c *fiber.Ctx) error {
	w, err := h.workflows.Duplicate(c.UserContext(), param(c, "team"), workflowName(c))
	if err != nil {
		return err
	}
	return httpx.Created(c, workflowLocation(w), w)
}

// export answers w as a file download that POST or PUT import unchanged.
func export(c *fiber.Ctx, w domain.Workflow) error {
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s.json"`, w.Name))
	return c.JSON(w)
}

func (h *handlers) exportWorkflow(c *fiber.Ctx) error {
	w, err := h.workflows.Export(c.UserContext(), param(c, "team"), workflowName(c))
	if err != nil {
		return err
	}
	return export(c, w)
}

func (h *handlers) exportAnywhere(c *fiber.Ctx) error {
	ref := param(c, "name")
	if team, name, ok := workflowid.Parse(ref); ok && team != "" {
		ref = team + "/" + name
	}
	w, err := h.workflows.ExportAnywhere(c.UserContext(), ref)
	if err != nil {
		return err
	}
	return export(c, w)
}

func (h *handlers) workflowChangelog(c *fiber.Ctx) error {
	log, err := h.workflows.Changelog(c.UserContext(), param(c, "team"), workflowName(c))
	if err != nil {
		return err
	}
	return c.JSON(log)
}

func (h *handlers) availableParameters(c *fiber.Ctx) error {
	params, err := h.workflows.AvailableParameters(c.UserContext(), param(c, "team"), workflowName(c))
	if err != nil {
		return err
	}
	return c.JSON(params)
}

func (h *handlers) queryWorkflows(c *fiber.Ctx) error {
	p, f, err := querySpec(c)
	if err != nil {
		return err
	}
	f.Statuses = httpx.List(c, "statuses")
	f.Names = workflowid.ResolveAll(param(c, "team"), httpx.List(c, "workflows"))
	res, err := h.workflows.Query(c.UserContext(), param(c, "team"), f, p)
	if err != nil {
		return err
	}
	return c.JSON(res)
}

func (h *handlers) getCanvas(c *fiber.Ctx) error {
	v, err := version(c)
	if err != nil {
		return err
	}
	canvas, err := h.workflows.Canvas(c.UserContext(), param(c, "team"), workflowName(c), v)
	if err != nil {
		return err
	}
	return c.JSON(canvas)
}

func (h *handlers) putCanvas(c *fiber.Ctx) error {
	replace, err := httpx.Bool(c, "replace", false)
	if err != nil {
		return err
	}
	var body domain.Canvas
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	canvas, created, err := h.workflows.PutCanvas(c.UserContext(), param(c, "team"), workflowName(c), body, replace)
	if err != nil {
		return err
	}
	if created {
		return httpx.Created(c, workflowLocation(canvas.Workflow), canvas)
	}
	return c.JSON(canvas)
}

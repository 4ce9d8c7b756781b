package httpapi

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/workflowid"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// submitBody is WorkflowSubmitRequest; `trigger` from API clients is ignored.
type submitBody struct {
	Labels          map[string]string `json:"labels"`
	Annotations     map[string]any    `json:"annotations"`
	Params          json.RawMessage   `json:"params"`
	Workspaces      json.RawMessage   `json:"workspaces"`
	Timeout         *int              `json:"timeout"`
	Retries         *int              `json:"retries"`
	Debug           bool              `json:"debug"`
	WorkflowVersion int               `json:"workflowVersion"`
	IdempotencyKey  string            `json:"idempotencyKey"`
	FromFailure     *bool             `json:"fromFailure"`
}

// request is the body's request; params come as the contract's list of {name, value} or
// as an object of name to value.
func (b submitBody) request() (domain.SubmitRequest, error) {
	params, err := app.DecodeParams(b.Params)
	if err != nil {
		return domain.SubmitRequest{}, err
	}
	return domain.SubmitRequest{Labels: b.Labels, Annotations: b.Annotations, Params: params,
		Workspaces: b.Workspaces, Timeout: b.Timeout, Retries: b.Retries, Debug: b.Debug}, nil
}

// optionalBody reads a body that may be absent, and the run request it makes.
func optionalBody(c *fiber.Ctx) (submitBody, domain.SubmitRequest, error) {
	var b submitBody
	if len(strings.TrimSpace(string(c.Body()))) == 0 {
		return b, domain.SubmitRequest{}, nil
	}
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return b, domain.SubmitRequest{}, err
	}
	req, err := b.request()
	return b, req, err
}

func (h *handlers) submit(c *fiber.Ctx) error {
	team := c.Params("team")
	name := workflowid.Resolve(team, c.Params("name")) // a v4 client sends the workflow's id
	start, err := httpx.Bool(c, "start", false)
	if err != nil {
		return err
	}
	b, req, err := optionalBody(c)
	if err != nil {
		return err
	}
	if b.Timeout != nil && *b.Timeout < 0 {
		return apperr.Invalid(apperr.WorkflowRunInvalidReq, "timeout must not be negative.", apperr.FieldError{Field: "timeout", Message: "must not be negative"})
	}
	if b.WorkflowVersion < 0 {
		return apperr.Invalid(apperr.WorkflowRunInvalidReq, "workflowVersion must be 1 or more.", apperr.FieldError{Field: "workflowVersion", Message: "must be 1 or more"})
	}
	p, err := require(c, team, name, "write")
	if err != nil {
		return err
	}
	idem := cmp.Or(b.IdempotencyKey, c.Get("Idempotency-Key"))
	v, created, err := h.app.Submit(c.UserContext(), app.Submission{
		Team: team, Workflow: name, Version: b.WorkflowVersion, Request: req, Key: idem, Start: start,
		Trigger: "manual", By: initiator(p),
	})
	if err != nil {
		return err
	}
	if !created {
		return c.JSON(v)
	}
	return httpx.Created(c, "/api/v2/team/"+team+"/workflowrun/"+v.ID, v)
}

func (h *handlers) get(c *fiber.Ctx) error {
	team := c.Params("team")
	p, err := requireTeamRuns(c, team, "read")
	if err != nil {
		return err
	}
	withTasks, err := httpx.Bool(c, "withTasks", true)
	if err != nil {
		return err
	}
	v, err := h.app.GetTeamRun(c.UserContext(), team, c.Params("id"), withTasks)
	if err != nil {
		return err
	}
	if err := inScope(p, v); err != nil {
		return err
	}
	return c.JSON(v)
}

// actOn reads the run of the path a caller acts on, once the caller may act in its team
// and sees the run.
func (h *handlers) actOn(c *fiber.Ctx) (p auth.Principal, team, id string, cur app.RunView, err error) {
	team, id = c.Params("team"), c.Params("id")
	if p, err = requireTeamRuns(c, team, "action"); err != nil {
		return p, team, id, cur, err
	}
	if cur, err = h.app.GetTeamRun(c.UserContext(), team, id, false); err != nil {
		return p, team, id, cur, err
	}
	return p, team, id, cur, inScope(p, cur)
}

// runMove checks the caller may act on the run, then calls move.
func (h *handlers) runMove(c *fiber.Ctx, move func(p auth.Principal, team, id string) (app.RunView, error)) error {
	p, team, id, cur, err := h.actOn(c)
	if err != nil {
		return err
	}
	if _, err := require(c, team, cur.WorkflowRef, "action"); err != nil {
		return err
	}
	v, err := move(p, team, id)
	if err != nil {
		return err
	}
	return c.JSON(v)
}

func (h *handlers) start(c *fiber.Ctx) error {
	_, req, err := optionalBody(c)
	if err != nil {
		return err
	}
	return h.runMove(c, func(_ auth.Principal, team, id string) (app.RunView, error) {
		return h.app.Start(c.UserContext(), team, id, req)
	})
}

func (h *handlers) cancel(c *fiber.Ctx) error {
	return h.runMove(c, func(p auth.Principal, team, id string) (app.RunView, error) {
		return h.app.Cancel(c.UserContext(), team, id, initiator(p).Name)
	})
}

func (h *handlers) finalize(c *fiber.Ctx) error {
	return h.runMove(c, func(_ auth.Principal, team, id string) (app.RunView, error) {
		return h.app.Finalize(c.UserContext(), team, id)
	})
}

func (h *handlers) retry(c *fiber.Ctx) error {
	b, req, err := optionalBody(c)
	if err != nil {
		return err
	}
	fromFailure := b.FromFailure == nil || *b.FromFailure
	p, team, id, _, err := h.actOn(c)
	if err != nil {
		return err
	}
	v, err := h.app.Retry(c.UserContext(), team, id, req, fromFailure, initiator(p))
	if err != nil {
		return err
	}
	return httpx.Created(c, "/api/v2/team/"+team+"/workflowrun/"+v.ID, v)
}

// filter reads the query filters shared by query and count.
func filter(c *fiber.Ctx, p auth.Principal, team string) (domain.RunFilter, error) {
	f := domain.RunFilter{Team: team}
	var err error
	if f.Labels, err = httpx.Labels(c); err != nil {
		return f, err
	}
	if f.From, err = httpx.EpochMillis(c, "fromDate"); err != nil {
		return f, err
	}
	if f.To, err = httpx.EpochMillis(c, "toDate"); err != nil {
		return f, err
	}
	// Workflows are named by name, `<team>/<name>` or id (v4 clients).
	f.Workflows = workflowid.ResolveAll(team, httpx.List(c, "workflows"))
	if p.Workflow != "" {
		// A workflow's token sees that workflow's runs only.
		f.None = len(f.Workflows) > 0 && !slices.Contains(f.Workflows, p.Workflow)
		f.Workflows = []string{p.Workflow}
	}
	return f, nil
}

func oneOf[T ~string](c *fiber.Ctx, name string, allowed []T) ([]string, error) {
	vals := httpx.List(c, name)
	for i, v := range vals {
		v = strings.ToLower(v)
		vals[i] = v
		if !slices.Contains(allowed, T(v)) {
			e := apperr.New(apperr.QueryInvalidFilters, "%s: unknown value %q.", name, v)
			e.Fields = []apperr.FieldError{{Field: name, Message: e.Message}}
			return nil, e
		}
	}
	return vals, nil
}

func (h *handlers) query(c *fiber.Ctx) error {
	team := c.Params("team")
	p, err := requireTeamRuns(c, team, "read")
	if err != nil {
		return err
	}
	pr, err := httpx.Paging(c, page.MaxSize)
	if err != nil {
		return err
	}
	if pr.Desc, err = httpx.Direction(c, "order", false); err != nil {
		return err
	}
	f, err := filter(c, p, team)
	if err != nil {
		return err
	}
	if f.Statuses, err = oneOf(c, "statuses", domain.Statuses); err != nil {
		return err
	}
	if f.Phases, err = oneOf(c, "phase", domain.Phases); err != nil {
		return err
	}
	if f.Triggers, err = oneOf(c, "triggers", domain.Triggers); err != nil {
		return err
	}
	f.IDs = httpx.List(c, "workflowruns")
	runs, total, err := h.app.FindRuns(c.UserContext(), f, pr)
	if err != nil {
		return err
	}
	return c.JSON(page.New(runs, pr, total))
}

func (h *handlers) count(c *fiber.Ctx) error {
	team := c.Params("team")
	p, err := requireTeamRuns(c, team, "read")
	if err != nil {
		return err
	}
	f, err := filter(c, p, team)
	if err != nil {
		return err
	}
	counts, err := h.app.CountRuns(c.UserContext(), f)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"status": counts})
}

package httpapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
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

// The actions of approval and manual tasks, and wait-for-event callbacks.

// requireActions checks the caller may do action on the team's actions.
func requireActions(c *fiber.Ctx, team, action string) (auth.Principal, error) {
	return auth.Require(c.UserContext(), auth.Scope{Team: team}, "action", action)
}

// decisionBody is one item of PUT /team/{team}/action. `params` completes a manual
// action's form, as a list of {name, value} or a map.
type decisionBody struct {
	ID       string          `json:"id"`
	Approved *bool           `json:"approved"`
	Comments string          `json:"comments"`
	Params   json.RawMessage `json:"params"`
}

func (h *handlers) decide(c *fiber.Ctx) error {
	team := c.Params("team")
	p, err := requireActions(c, team, "action")
	if err != nil {
		return err
	}
	if p.Type != auth.TypeUser && p.Type != auth.TypeSession {
		return apperr.New(apperr.PermissionDenied, "Only people decide actions: sign in, or use a user token.")
	}
	var body []decisionBody
	if err := httpx.DecodeJSON(c, &body); err != nil {
		return err
	}
	items := make([]app.Decision, len(body))
	for i, b := range body {
		if b.Approved == nil {
			e := apperr.New(apperr.RequestInvalid, "Item %d: approved is required (true or false).", i)
			e.Fields = []apperr.FieldError{{Field: "[" + strconv.Itoa(i) + "].approved", Message: "is required"}}
			return e
		}
		values, err := app.DecodeParams(b.Params)
		if err != nil {
			return err
		}
		items[i] = app.Decision{ID: b.ID, Approved: *b.Approved, Comments: b.Comments, Values: values}
	}
	by := domain.Actioner{ID: p.ID, Name: cmp.Or(p.Name, p.Email, p.ID), Email: p.Email}
	if err := h.app.Decide(c.UserContext(), team, by, items); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h *handlers) action(c *fiber.Ctx) error {
	team := c.Params("team")
	if _, err := requireActions(c, team, "read"); err != nil {
		return err
	}
	v, err := h.app.Action(c.UserContext(), team, c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(v)
}

// actionSorts are the fields a search of actions orders by.
var actionSorts = []string{"creationDate", "name", "status"}

func (h *handlers) queryActions(c *fiber.Ctx) error {
	team := c.Params("team")
	if _, err := requireActions(c, team, "read"); err != nil {
		return err
	}
	pr, err := httpx.Paging(c, 10)
	if err != nil {
		return err
	}
	f, err := actionFilter(c, team)
	if err != nil {
		return err
	}
	if f.Types, err = oneOf(c, "types", domain.ActionTypes); err != nil {
		return err
	}
	if f.Statuses, err = oneOf(c, "statuses", domain.ActionStatuses); err != nil {
		return err
	}
	var s domain.ActionSort
	if s.Field, err = httpx.SortField(c, "sort", actionSorts, "creationDate"); err != nil {
		return err
	}
	desc, err := httpx.Direction(c, "order", true)
	if err != nil {
		return err
	}
	s.Asc = !desc
	list, total, err := h.app.FindActions(c.UserContext(), f, s, pr)
	if err != nil {
		return err
	}
	return c.JSON(page.New(list, pr, total))
}

func (h *handlers) actionSummary(c *fiber.Ctx) error {
	team := c.Params("team")
	if _, err := requireActions(c, team, "read"); err != nil {
		return err
	}
	f, err := actionFilter(c, team)
	if err != nil {
		return err
	}
	s, err := h.app.SummarizeActions(c.UserContext(), f)
	if err != nil {
		return err
	}
	return c.JSON(s)
}

func actionFilter(c *fiber.Ctx, team string) (domain.ActionFilter, error) {
	f := domain.ActionFilter{Team: team, Workflows: workflowid.ResolveAll(team, httpx.List(c, "workflows"))}
	var err error
	if f.From, err = httpx.EpochMillis(c, "fromDate"); err != nil {
		return f, err
	}
	f.To, err = httpx.EpochMillis(c, "toDate")
	return f, err
}

// maxTopicLen bounds a callback's topic.
const maxTopicLen = 256

// callback ends a run's eventwait tasks waiting on a topic (POST body → their result
// `data`), or keeps it for one that starts later. The caller is a principal allowed to act
// on the run's workflow's runs, or the run's own callback token.
func (h *handlers) callback(c *fiber.Ctx) error {
	id, topic := c.Query("ref"), c.Query("topic")
	switch {
	case id == "" || topic == "":
		return badFilter("ref and topic are required.", "ref")
	case len(topic) > maxTopicLen || strings.ContainsRune(topic, 0):
		return badFilter("topic must be at most 256 characters, without NUL.", "topic")
	case len(id) > 128 || strings.ContainsRune(id, 0):
		return apperr.New(apperr.WorkflowRunNotFound, "Workflow run was not found.")
	}
	status := domain.Succeeded
	switch strings.ToLower(c.Query("status")) {
	case "", "succeeded":
	case "failed":
		status = domain.Failed
	default:
		return badFilter("status must be Succeeded or Failed.", "status")
	}
	data := ""
	if c.Method() == fiber.MethodPost && len(c.Body()) > 0 {
		if !json.Valid(c.Body()) {
			return apperr.New(apperr.RequestInvalid, "The callback's body must be JSON.")
		}
		data = string(c.Body())
	}
	p, ok := auth.FromContext(c.UserContext())
	if !ok {
		return apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	run, err := h.app.FindCallbackRun(c.UserContext(), id)
	if err != nil {
		return err
	}
	if p.Type == auth.TypeRun {
		// A run's callback token answers that run's callbacks only, while it runs.
		if p.ID != id {
			return apperr.New(apperr.PermissionDenied, "This callback token is for another run.")
		}
		if run.Ended {
			return apperr.New(apperr.Unauthenticated, "The callback token expired with its run.")
		}
	} else if _, err := auth.Require(c.UserContext(), auth.Scope{Team: run.Team, Workflow: run.Workflow}, "workflowrun", "action"); err != nil {
		return err
	}
	if err := h.app.Callback(c.UserContext(), id, topic, status, compactJSON(data)); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func badFilter(msg, field string) error {
	e := apperr.New(apperr.QueryInvalidFilters, "%s", msg)
	e.Fields = []apperr.FieldError{{Field: field, Message: msg}}
	return e
}

// compactJSON is a JSON body without its insignificant spaces, as a result holds it.
func compactJSON(s string) string {
	if s == "" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}

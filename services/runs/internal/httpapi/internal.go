package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// InternalRoutes registers the endpoints Baton's own services call (libs/runsapi), on r
// (runsapi.Prefix, Baton's services only): runners claim and beat for attempts, workflows
// and identity ask about a workflow's or a team's runs before deleting it, identity asks
// what a team uses of its run quotas.
func InternalRoutes(r fiber.Router, a *app.App) {
	h := &handlers{app: a}
	r.Post(runsapi.ClaimRoute, h.claim)
	r.Post(runsapi.HeartbeatRoute, h.heartbeat)
	r.Get(runsapi.ActiveRunsRoute, h.activeRuns)
	r.Post(runsapi.CancelActiveRunsRoute, h.cancelActiveRuns)
	r.Get(runsapi.UsageRoute, h.usage)
	r.Post(runsapi.SubmitRunRoute, h.submitRun)
	r.Get(runsapi.RunStateRoute, h.runState)
	r.Post(runsapi.CancelRunRoute, h.cancelRun)
}

// submitRun submits a run for one of Baton's services: a schedule's fire, an event, a
// webhook, a code-host delivery, a chat command. Its trigger must be one those services
// start runs with; the caller is trusted for the initiator it
// names, as it is for the principal it signs.
func (h *handlers) submitRun(c *fiber.Ctx) error {
	var b runsapi.SubmitRun
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	switch b.Trigger {
	case "schedule", "event", "webhook", "codehost", "chat":
	default:
		return apperr.Invalid(apperr.WorkflowRunInvalidReq, "trigger must be schedule, event, webhook, codehost or chat.",
			apperr.FieldError{Field: "trigger", Message: "must be schedule, event, webhook, codehost or chat"})
	}
	v, created, err := h.app.Submit(c.UserContext(), app.Submission{
		Team: c.Params("team"), Workflow: c.Params("name"), Key: b.IdempotencyKey, Start: true, Trigger: b.Trigger,
		Request: domain.SubmitRequest{Params: b.Params, Secret: b.Secret, Labels: b.Labels},
		By:      domain.Initiator{Type: b.InitiatedBy.Type, ID: b.InitiatedBy.ID, Name: b.InitiatedBy.Name, Person: b.InitiatedBy.Person},
	})
	if err != nil {
		return err
	}
	v.Tasks = nil
	return c.JSON(runsapi.SubmittedRun{RunState: runsapi.RunState{ID: v.ID, Status: string(v.Status), Phase: string(v.Phase)}, Created: created, Run: &v})
}

func (h *handlers) runState(c *fiber.Ctx) error {
	status, phase, err := h.app.RunState(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(runsapi.RunState{ID: c.Params("id"), Status: status, Phase: phase})
}

func (h *handlers) cancelRun(c *fiber.Ctx) error {
	var b runsapi.CancelRun
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	status, phase, err := h.app.CancelRun(c.UserContext(), c.Params("id"), b.Reason)
	if err != nil {
		return err
	}
	return c.JSON(runsapi.RunState{ID: c.Params("id"), Status: status, Phase: phase})
}

func (h *handlers) activeRuns(c *fiber.Ctx) error {
	n, err := h.app.ActiveRuns(c.UserContext(), c.Params("team"), c.Query("workflow"))
	if err != nil {
		return err
	}
	return c.JSON(runsapi.ActiveRuns{Active: n})
}

func (h *handlers) cancelActiveRuns(c *fiber.Ctx) error {
	team, workflow := c.Params("team"), c.Query("workflow")
	why := "cancelled: team " + team + " is being deleted"
	if workflow != "" {
		why = "cancelled: workflow " + workflow + " is being deleted"
	}
	n, err := h.app.CancelActiveRuns(c.UserContext(), team, workflow, why)
	if err != nil {
		return err
	}
	return c.JSON(runsapi.CancelledRuns{Cancelled: n})
}

func (h *handlers) claim(c *fiber.Ctx) error {
	var b runsapi.AttemptRequest
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	ok, err := h.app.Claim(c.UserContext(), c.Params("id"), b.Attempt, b.Runner)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.New(apperr.WorkflowRunInvalidPhase, "Attempt %d of task run '%s' cannot be claimed.", b.Attempt, c.Params("id"))
	}
	return c.JSON(runsapi.ClaimAnswer{Claimed: true})
}

func (h *handlers) heartbeat(c *fiber.Ctx) error {
	var b runsapi.AttemptRequest
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	cancel, ok, err := h.app.Heartbeat(c.UserContext(), c.Params("id"), b.Attempt, b.Runner)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.New(apperr.WorkflowRunInvalidPhase, "Attempt %d of task run '%s' is not runner %s's.", b.Attempt, c.Params("id"), b.Runner)
	}
	return c.JSON(runsapi.HeartbeatAnswer{Cancel: cancel})
}

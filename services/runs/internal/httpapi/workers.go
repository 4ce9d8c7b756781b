package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/client"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// The endpoints of workers of generic tasks over HTTP (app/workers.go). The gateway lets
// through only principals allowed to work the queue they name. Their bodies are the SDK's
// types (libs/client), the wire's one definition.
func workerRoutes(r fiber.Router, h *handlers) {
	r.Post("/team/:team/queue/:queue/claim", h.claimQueued)
	r.Post("/team/:team/queue/:queue/attempt/:id/heartbeat", h.workerBeat)
	r.Post("/team/:team/queue/:queue/attempt/:id/log", h.workerLog)
	r.Post("/team/:team/queue/:queue/attempt/:id/end", h.workerEnd)
	r.Post("/team/:team/queue/:queue/attempt/:id/release", h.workerRelease)
}

func (h *handlers) claimQueued(c *fiber.Ctx) error {
	var b client.ClaimRequest
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	a, err := h.claimWaiting(c, b.Worker, b.WaitSeconds)
	if err != nil {
		return err
	}
	return h.sendAttempt(c, a)
}

// claimWaiting claims for worker the oldest attempt of the request's queue, waiting up to
// waitSeconds for one; nil when none came.
func (h *handlers) claimWaiting(c *fiber.Ctx, worker string, waitSeconds int) (*events.TaskAttempt, error) {
	// The wait ends when the server begins shutting down, which waits for it otherwise.
	ctx, cancel := context.WithCancel(c.UserContext())
	defer cancel()
	stopping := c.Context().Done() // read here: the request's context is reused once this returns
	go func() {
		select {
		case <-stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	return h.app.ClaimQueued(ctx, c.Params("team"), c.Params("queue"), worker, time.Duration(waitSeconds)*time.Second)
}

// sendAttempt answers attempt a as its worker gets it, or 204 when a is nil.
func (h *handlers) sendAttempt(c *fiber.Ctx, a *events.TaskAttempt) error {
	if a == nil {
		return c.SendStatus(http.StatusNoContent)
	}
	timing := h.app.Timing()
	out := client.WorkerAttempt{ID: domain.AttemptID(a.TaskRunID, a.Attempt), TaskRunID: a.TaskRunID, RunID: a.RunID, Team: a.Team,
		Workflow: a.Workflow, Queue: a.Queue, Name: a.Name, Attempt: a.Attempt, Params: a.Params, Results: a.Results,
		Secrets: a.Secrets, HeartbeatSeconds: max(1, int(timing.Beat/time.Second)), LeaseSeconds: int(timing.Lease / time.Second)}
	if !a.Deadline.IsZero() {
		d := a.Deadline.UTC()
		out.Deadline = &d
	}
	if out.Params == nil {
		out.Params = map[string]any{}
	}
	if out.Results == nil {
		out.Results = []string{}
	}
	if out.Secrets == nil {
		out.Secrets = []string{}
	}
	return c.JSON(out)
}

func (h *handlers) workerBeat(c *fiber.Ctx) error {
	var b client.WorkerRequest
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	cancel, err := h.app.WorkerBeat(c.UserContext(), c.Params("team"), c.Params("queue"), c.Params("id"), b.Worker)
	if err != nil {
		return err
	}
	return c.JSON(client.HeartbeatAnswer{Cancel: cancel})
}

func (h *handlers) workerLog(c *fiber.Ctx) error {
	var b client.AttemptLog
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	if err := h.app.WorkerLog(c.UserContext(), c.Params("team"), c.Params("queue"), c.Params("id"), b.Worker, b.Seq, b.Text); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

func (h *handlers) workerEnd(c *fiber.Ctx) error {
	var b client.AttemptEnd
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	if err := h.app.WorkerEnd(c.UserContext(), c.Params("team"), c.Params("queue"), c.Params("id"), b.Worker,
		domain.Status(b.Status), b.Message, b.Results); err != nil {
		return err
	}
	if !b.ClaimNext {
		return c.SendStatus(http.StatusNoContent)
	}
	// The worker's next attempt, in the same round trip. A claim that fails leaves the end
	// answered as one without: the worker then claims as usual.
	a, err := h.claimWaiting(c, b.Worker, b.WaitSeconds)
	if err != nil {
		a = nil
	}
	return h.sendAttempt(c, a)
}

func (h *handlers) workerRelease(c *fiber.Ctx) error {
	var b client.WorkerRequest
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	if err := h.app.WorkerRelease(c.UserContext(), c.Params("team"), c.Params("queue"), c.Params("id"), b.Worker); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

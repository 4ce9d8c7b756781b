package httpapi

import (
	"context"
	"io"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// log answers a task run's log as text; follow streams it until the task ends.
func (h *handlers) log(c *fiber.Ctx) error {
	id := c.Params("id")
	follow, err := httpx.Bool(c, "follow", false)
	if err != nil {
		return err
	}
	src, err := h.app.TaskLog(c.UserContext(), id)
	if err != nil {
		return err
	}
	p, err := require(c, src.Team, src.Workflow, "read")
	if err != nil {
		return apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", id)
	}
	if p.Workflow != "" && p.Workflow != src.Workflow {
		return apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", id)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	if !follow || src.Ended {
		text, _, err := h.app.ReadLog(c.UserContext(), id, src.Attempts, domain.LogCursor{})
		if err != nil {
			return err
		}
		return c.SendString(text)
	}
	httpx.Stream(c, func(ctx context.Context, w io.Writer) error {
		return h.follow(ctx, w, id, src.Attempts)
	})
	return nil
}

// follow writes task run id's log to w as it is stored, through its attempts (attempts
// so far), until the task ends; it stops with ctx (the client left or the service is
// shutting down) with ctx's error.
func (h *handlers) follow(ctx context.Context, w io.Writer, id string, attempts int) error {
	var after domain.LogCursor
	tick := time.NewTicker(h.poll)
	defer tick.Stop()
	for {
		text, next, err := h.app.ReadLog(ctx, id, attempts, after)
		if err != nil {
			return err
		}
		after = next
		if _, err := io.WriteString(w, text); err != nil {
			return err
		}
		n, ended, err := h.app.TaskProgress(ctx, id)
		if err != nil {
			return err
		}
		if ended {
			// One last read: chunks stored before the end was.
			text, _, err := h.app.ReadLog(ctx, id, n, after)
			if err != nil {
				return err
			}
			_, err = io.WriteString(w, text)
			return err
		}
		attempts = n
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

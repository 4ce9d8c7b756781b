// Package httpapi is the schedules service's HTTP transport: parse, call the use case,
// render.
package httpapi

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/services/schedules/internal/app"
)

type handlers struct {
	now func() time.Time
}

// Routes registers the service's endpoints on r (/api/v2), which already authenticates
// callers. Fixed segments come before parameters.
func Routes(r fiber.Router, now func() time.Time) {
	h := &handlers{now: now}
	r.Get("/team/:team/schedule/validate-cron", h.validateCron)
	// v4 clients' team-less path (deprecated), answered alike.
	r.Get("/schedule/validate-cron", h.validateCron)
}

// cronCheck is the contract's CronValidationResponse.
type cronCheck struct {
	Valid     bool        `json:"valid"`
	Message   string      `json:"message,omitempty"`
	NextDates []time.Time `json:"nextDates,omitempty"`
}

func (h *handlers) validateCron(c *fiber.Ctx) error {
	check, err := app.CheckCron(c.Query("cron"), c.Query("timezone"), h.now())
	if err != nil {
		return err
	}
	return c.JSON(cronCheck{Valid: check.Valid, Message: check.Message, NextDates: check.NextDates})
}

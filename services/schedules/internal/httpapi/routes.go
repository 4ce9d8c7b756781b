// Package httpapi is the schedules service's HTTP transport: parse, call the use case,
// render.
package httpapi

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/services/schedules/internal/app"
)

type handlers struct {
	schedules *app.Schedules
	now       func() time.Time
}

// Routes registers the service's endpoints on r (/api/v2), which already authenticates
// callers. Fixed segments come before parameters.
func Routes(r fiber.Router, schedules *app.Schedules, now func() time.Time) {
	h := &handlers{schedules: schedules, now: now}
	r.Post("/team/:team/schedule", h.create)
	r.Put("/team/:team/schedule", h.apply)
	r.Get("/team/:team/schedule/validate-cron", h.validateCron)
	r.Get("/team/:team/schedule/query", h.query)
	r.Get("/team/:team/schedule/calendars", h.calendars)
	r.Get("/team/:team/schedule/:id", h.get)
	r.Delete("/team/:team/schedule/:id", h.archive)
	r.Post("/team/:team/schedule/:id/backfill", h.backfill)
	// v4 clients' team-less path (deprecated), answered alike.
	r.Get("/schedule/validate-cron", h.validateCron)
}

// cronCheck is the contract's CronValidationResponse.
type cronCheck struct {
	Valid     bool     `json:"valid"`
	Message   string   `json:"message,omitempty"`
	NextDates []string `json:"nextDates,omitempty"`
}

func (h *handlers) validateCron(c *fiber.Ctx) error {
	check, err := app.CheckCron(c.Query("cron"), c.Query("timezone"), h.now())
	if err != nil {
		return err
	}
	out := cronCheck{Valid: check.Valid, Message: check.Message}
	// In UTC with milliseconds, as every time in a body: the zone decides which instants,
	// not how they are written.
	for _, t := range check.NextDates {
		out.NextDates = append(out.NextDates, date(t))
	}
	return c.JSON(out)
}

// Package httpapi is identity's HTTP transport: parse, call the use case, render.
package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/services/identity/internal/app"
)

type handlers struct {
	teams *app.Teams
}

// Routes registers identity's endpoints on r, which already authenticates callers.
func Routes(r fiber.Router, teams *app.Teams) {
	h := &handlers{teams: teams}
	r.Post("/team", h.createTeam)
	r.Get("/team/query", h.queryTeams)
	r.Post("/team/validate-name", h.validateTeamName)
	r.Get("/team/:team", h.getTeam)
	r.Patch("/team/:team", h.patchTeam)
	r.Delete("/team/:team", h.deleteTeam)
}

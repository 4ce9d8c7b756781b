// Package httpapi is identity's HTTP transport: parse, call the use case, render.
package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/services/identity/internal/app"
)

type handlers struct {
	teams *app.Teams
	users *app.Users
}

// Routes registers identity's endpoints on r, which already authenticates callers.
func Routes(r fiber.Router, teams *app.Teams, users *app.Users) {
	h := &handlers{teams: teams, users: users}
	r.Post("/team", h.createTeam)
	r.Get("/team/query", h.queryTeams)
	r.Get("/team/roles", h.teamRoles)
	r.Get("/team/quotas/default", h.defaultTeamQuotas)
	r.Post("/team/validate-name", h.validateTeamName)
	r.Get("/team/:team", h.getTeam)
	r.Patch("/team/:team", h.patchTeam)
	r.Delete("/team/:team", h.deleteTeam)
	r.Delete("/team/:team/members", h.removeMembers)
	r.Delete("/team/:team/leave", h.leaveTeam)
	r.Delete("/team/:team/approvers", h.deleteApproverGroups)
	r.Delete("/team/:team/approvers/:groupId", h.deleteApproverGroup) // v4 clients' path
	r.Delete("/team/:team/parameters/:name", h.deleteTeamParameter)
	r.Delete("/team/:team/quotas", h.resetTeamQuotas)
	r.Get("/user/query", h.queryUsers)
	r.Get("/user/:userId", h.getUser)
	r.Patch("/user/:userId", h.patchUser)
	r.Delete("/user/:userId", h.deleteUser)
	r.Get("/profile", h.getProfile)
	r.Patch("/profile", h.patchProfile)
}

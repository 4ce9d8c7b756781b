package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/services/identity/internal/app"
)

// TeamInternalRoutes registers, on r (/internal/v1, Baton's services only), the read of a
// team as its team.created event announces it, and what the workflows service needs of it:
//
//	GET /teams/{team}                  → 200 identityapi.Team | 404 TEAM_NOT_FOUND
//	GET /teams/{team}/workflow-context → 200 identityapi.WorkflowContext | 404 TEAM_NOT_FOUND
func TeamInternalRoutes(r fiber.Router, teams *app.Teams) {
	r.Get(identityapi.WorkflowContextRoute, func(c *fiber.Ctx) error {
		wc, err := teams.WorkflowContext(c.UserContext(), c.Params("team"))
		if err != nil {
			return err
		}
		return c.JSON(identityapi.WorkflowContext{Team: wc.Team, ParamNames: wc.ParamNames, MaxWorkflowCount: wc.MaxWorkflowCount})
	})
	r.Get(identityapi.TeamRoute, func(c *fiber.Ctx) error {
		t, err := teams.Announced(c.UserContext(), c.Params("team"))
		if err != nil {
			return err
		}
		return c.JSON(identityapi.Team{ID: t.ID, Name: t.Name, DisplayName: t.DisplayName, CreationDate: t.CreationDate})
	})
}

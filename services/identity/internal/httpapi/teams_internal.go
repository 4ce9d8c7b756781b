package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/services/identity/internal/app"
)

// TeamInternalRoutes registers, on r (/internal/v1, Baton's services only), the read of a
// team as its team.created event announces it (libs/teamrecord is its client):
//
//	GET /teams/{team} → 200 events.TeamCreated | 404 TEAM_NOT_FOUND
func TeamInternalRoutes(r fiber.Router, teams *app.Teams) {
	r.Get("/teams/:team", func(c *fiber.Ctx) error {
		t, err := teams.Announced(c.UserContext(), c.Params("team"))
		if err != nil {
			return err
		}
		return c.JSON(t)
	})
}

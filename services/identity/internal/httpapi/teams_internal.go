package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/services/identity/internal/app"
)

// TeamInternalRoutes registers, on r (/internal/v1, Baton's services only), the read of a
// team as its team.created event announces it, what the workflows service needs of it, and
// its approver groups, for the runs service's approvals:
//
//	GET /teams/{team}                  → 200 identityapi.Team | 404 TEAM_NOT_FOUND
//	GET /teams/{team}/workflow-context → 200 identityapi.WorkflowContext | 404 TEAM_NOT_FOUND
//	GET /teams/{team}/approver-groups  → 200 identityapi.ApproverGroups | 404 TEAM_NOT_FOUND
func TeamInternalRoutes(r fiber.Router, teams *app.Teams) {
	r.Get(identityapi.ApproverGroupsRoute, func(c *fiber.Ctx) error {
		g, err := teams.ApproverGroups(c.UserContext(), c.Params("team"))
		if err != nil {
			return err
		}
		return c.JSON(approverGroupsView(g))
	})
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

// approverGroupsView is the contract's form of a team's approver groups, with empty lists
// rather than null where there are none.
func approverGroupsView(g app.TeamApproverGroups) identityapi.ApproverGroups {
	out := identityapi.ApproverGroups{Team: g.Team, Groups: make([]identityapi.ApproverGroup, len(g.Groups))}
	for i, grp := range g.Groups {
		out.Groups[i] = identityapi.ApproverGroup{ID: grp.ID, Name: grp.Name, Approvers: append([]string{}, grp.Approvers...)}
	}
	return out
}

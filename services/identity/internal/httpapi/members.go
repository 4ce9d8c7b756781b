package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/services/identity/internal/app"
)

// removeMembers answers DELETE /team/{team}/members with a body of [{"id"} or {"email"}]
// (plain id or email strings are accepted too).
func (h *handlers) removeMembers(c *fiber.Ctx) error {
	var refs []MemberRef
	if err := httpx.DecodeJSON(c, &refs); err != nil {
		return err
	}
	in := make([]app.MemberRef, len(refs))
	for i, r := range refs {
		in[i] = r.ref()
	}
	if err := h.teams.RemoveMembers(c.UserContext(), c.Params("team"), in); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h *handlers) leaveTeam(c *fiber.Ctx) error {
	if err := h.teams.LeaveTeam(c.UserContext(), c.Params("team")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// deleteApproverGroups answers DELETE /team/{team}/approvers with a body of group ids.
func (h *handlers) deleteApproverGroups(c *fiber.Ctx) error {
	var ids []string
	if err := httpx.DecodeJSON(c, &ids); err != nil {
		return err
	}
	if err := h.teams.RemoveApproverGroups(c.UserContext(), c.Params("team"), ids); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// deleteApproverGroup answers the v4 path DELETE /team/{team}/approvers/{groupId}: the list
// form with one id.
func (h *handlers) deleteApproverGroup(c *fiber.Ctx) error {
	if err := h.teams.RemoveApproverGroups(c.UserContext(), c.Params("team"), []string{c.Params("groupId")}); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

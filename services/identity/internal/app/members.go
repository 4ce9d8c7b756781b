package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// updateAsManager changes the team called name with fn, for owners and admins only; the
// check is repeated on the version being written.
func (s *Teams) updateAsManager(ctx context.Context, name string, fn func(*domain.Team) error) (domain.Team, error) {
	return s.store.UpdateTeam(ctx, name, func(t *domain.Team) error {
		p, err := requireInTeam(ctx, *t, "team", "write")
		if err != nil {
			return err
		}
		if !canManageMembers(p, *t) {
			return errOnlyOwners(t.Name)
		}
		return fn(t)
	})
}

// RemoveMembers removes the referenced users from the team called name (owners and
// admins). References to users who are not members are ignored; removing the last owner
// is refused with TEAM_LAST_OWNER.
func (s *Teams) RemoveMembers(ctx context.Context, name string, refs []MemberRef) error {
	ids := make([]string, 0, len(refs))
	for i, ref := range refs {
		if ref.ID != "" {
			ids = append(ids, ref.ID)
			continue
		}
		u, err := s.resolveRef(ctx, ref, fmt.Sprintf("[%d]", i))
		if errors.Is(err, domain.ErrUserNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		ids = append(ids, u.ID)
	}
	_, err := s.updateAsManager(ctx, name, func(t *domain.Team) error { return t.RemoveMembers(ids) })
	return err
}

// LeaveTeam removes the calling person from the team called name. The last owner cannot
// leave (TEAM_LAST_OWNER).
func (s *Teams) LeaveTeam(ctx context.Context, name string) error {
	p, err := callerPrincipal(ctx)
	if err != nil {
		return err
	}
	if !isUserKind(p) || p.ID == "" {
		return apperr.New(apperr.TeamInvalidReq, "Only a user can leave a team; this request authenticates as a %s.", p.Type)
	}
	if !userTokenAllows(p, "team", "write") {
		return apperr.New(apperr.PermissionDenied, "This token may not change team memberships.")
	}
	_, err = s.store.UpdateTeam(ctx, name, func(t *domain.Team) error {
		if _, ok := t.RoleOf(p.ID); !ok {
			return apperr.New(apperr.TeamInvalidReq, "You are not a member of team '%s'.", t.Name)
		}
		return t.RemoveMembers([]string{p.ID})
	})
	return err
}

// RemoveApproverGroups deletes the team's approver groups with these ids (owners and
// admins); unknown ids are ignored.
func (s *Teams) RemoveApproverGroups(ctx context.Context, name string, ids []string) error {
	_, err := s.updateAsManager(ctx, name, func(t *domain.Team) error {
		t.RemoveApproverGroups(ids)
		return nil
	})
	return err
}

// TeamApproverGroups is a team's approver groups, in the team's order.
type TeamApproverGroups struct {
	Team   string
	Groups []domain.ApproverGroup
}

// ApproverGroups returns the approver groups of the team called name as they are now, each
// with its approvers' user ids; an unknown team answers 404 TEAM_NOT_FOUND. Only Baton's
// services may ask: the runs service, deciding who may answer an approval, has checked its
// own caller's rights on the run.
func (s *Teams) ApproverGroups(ctx context.Context, name string) (TeamApproverGroups, error) {
	if _, err := auth.RequireService(ctx); err != nil {
		return TeamApproverGroups{}, err
	}
	t, err := s.store.FindTeamByName(ctx, name)
	if err != nil {
		return TeamApproverGroups{}, err
	}
	return TeamApproverGroups{Team: t.Name, Groups: t.ApproverGroups}, nil
}

// RemoveTeamParam deletes the team parameter called param (team/write); a missing one is
// PARAMS_NOT_FOUND.
func (s *Teams) RemoveTeamParam(ctx context.Context, name, param string) error {
	_, err := s.store.UpdateTeam(ctx, name, func(t *domain.Team) error {
		if _, err := requireInTeam(ctx, *t, "team", "write"); err != nil {
			return err
		}
		return t.RemoveParam(param)
	})
	return err
}

// ResetQuotas drops the team's quota overrides, so the defaults apply again (admins).
func (s *Teams) ResetQuotas(ctx context.Context, name string) error {
	_, err := s.store.UpdateTeam(ctx, name, func(t *domain.Team) error {
		p, err := requireInTeam(ctx, *t, "team", "write")
		if err != nil {
			return err
		}
		if !adminOrService(p) {
			return errOnlyAdmins("a team's quotas")
		}
		t.QuotaOverrides = domain.TeamQuotaOverrides{}
		return nil
	})
	return err
}

// TeamRole is a team role and what it grants inside its team.
type TeamRole struct {
	Name        string
	Description string
	Permissions []string
}

var teamRoleDescriptions = map[string]string{
	domain.TeamRoleOwner:  "Everything in the team, including its members, approver groups and deletion.",
	domain.TeamRoleEditor: "Reads, writes and runs everything in the team; cannot delete or manage members.",
	domain.TeamRoleReader: "Reads everything in the team.",
}

// TeamRoles lists the team roles, most powerful first, with their permissions.
func TeamRoles() []TeamRole {
	out := make([]TeamRole, 0, len(domain.TeamRoleNames))
	for _, name := range domain.TeamRoleNames {
		out = append(out, TeamRole{Name: name, Description: teamRoleDescriptions[name], Permissions: auth.TeamRoles[name]})
	}
	return out
}

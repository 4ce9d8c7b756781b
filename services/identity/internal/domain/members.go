package domain

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/baton-flow/baton/libs/apperr"
)

// Team roles. They mirror libs/auth's team roles, which domain code cannot import (it pulls
// in Fiber); a test keeps the two lists equal.
const (
	TeamRoleOwner  = "owner"
	TeamRoleEditor = "editor"
	TeamRoleReader = "reader"
)

// TeamRoleNames lists the team roles, most powerful first.
var TeamRoleNames = []string{TeamRoleOwner, TeamRoleEditor, TeamRoleReader}

// ValidTeamRole reports whether role is a team role.
func ValidTeamRole(role string) bool { return slices.Contains(TeamRoleNames, role) }

// Member is one person of a team: a user id and that user's role there.
type Member struct {
	UserID string
	Role   string
}

// MemberChange adds a user to a team or changes their role.
type MemberChange struct {
	UserID string
	Role   string
}

// ApproverGroup is a named set of members who may decide approvals.
type ApproverGroup struct {
	ID        string
	Name      string
	Approvers []string // user ids, all members of the team
}

// ApproverGroupChange creates or updates the group called Name.
type ApproverGroupChange struct {
	// ID is the id a new group gets; an existing group keeps its own.
	ID   string
	Name string
	// Approvers replace the group's approvers; nil keeps them (an empty list clears them).
	Approvers []string
}

// TeamLastOwner is the error for a change that would leave a team without an owner.
func TeamLastOwner(team string) error {
	return apperr.New(apperr.TeamLastOwner,
		"Team '%s' must keep at least one owner; make another member owner first.", team)
}

// InvalidTeamRole is the error for a role that is not a team role.
func InvalidTeamRole(field, role string) error {
	return apperr.Invalid(apperr.TeamInvalidUserRole,
		fmt.Sprintf("'%s' is not a team role; use one of %s.", role, strings.Join(TeamRoleNames, ", ")),
		apperr.FieldError{Field: field, Message: "unknown role"})
}

// RoleOf returns the role of the user in t.
func (t Team) RoleOf(userID string) (string, bool) {
	for _, m := range t.Members {
		if m.UserID == userID {
			return m.Role, true
		}
	}
	return "", false
}

// Owners counts t's owners.
func (t Team) Owners() int {
	n := 0
	for _, m := range t.Members {
		if m.Role == TeamRoleOwner {
			n++
		}
	}
	return n
}

// IsLastOwner reports whether userID is the only owner of t.
func (t Team) IsLastOwner(userID string) bool {
	role, ok := t.RoleOf(userID)
	return ok && role == TeamRoleOwner && t.Owners() == 1
}

// UpsertMembers adds members or changes their roles. A change that leaves a team that had
// owners without any fails with TEAM_LAST_OWNER.
func (t *Team) UpsertMembers(changes []MemberChange) error {
	if len(changes) == 0 {
		return nil
	}
	owners := t.Owners()
	for i, ch := range changes {
		if !ValidTeamRole(ch.Role) {
			return InvalidTeamRole(fmt.Sprintf("members[%d].role", i), ch.Role)
		}
		idx := slices.IndexFunc(t.Members, func(m Member) bool { return m.UserID == ch.UserID })
		if idx >= 0 {
			t.Members[idx].Role = ch.Role
		} else {
			t.Members = append(t.Members, Member{UserID: ch.UserID, Role: ch.Role})
		}
	}
	if owners > 0 && t.Owners() == 0 {
		return TeamLastOwner(t.Name)
	}
	return nil
}

// RemoveMembers removes users from t and from its approver groups; users who are not
// members are ignored. Removing the last owner fails with TEAM_LAST_OWNER.
func (t *Team) RemoveMembers(userIDs []string) error {
	owners := t.Owners()
	t.Members = slices.DeleteFunc(t.Members, func(m Member) bool { return slices.Contains(userIDs, m.UserID) })
	if owners > 0 && t.Owners() == 0 {
		return TeamLastOwner(t.Name)
	}
	for i := range t.ApproverGroups {
		t.ApproverGroups[i].Approvers = slices.DeleteFunc(t.ApproverGroups[i].Approvers,
			func(id string) bool { return slices.Contains(userIDs, id) })
	}
	return nil
}

// UpsertApproverGroups creates or updates approver groups by name. Approvers must be
// members of t.
func (t *Team) UpsertApproverGroups(changes []ApproverGroupChange) error {
	for i, ch := range changes {
		name := strings.TrimSpace(ch.Name)
		if name == "" {
			return apperr.Invalid(apperr.TeamInvalidReq, "Every approver group needs a name.",
				apperr.FieldError{Field: fmt.Sprintf("approverGroups[%d].name", i), Message: "required"})
		}
		var approvers []string
		for j, id := range ch.Approvers {
			if _, ok := t.RoleOf(id); !ok {
				return apperr.Invalid(apperr.TeamInvalidReq,
					fmt.Sprintf("Approvers of group '%s' must be members of team '%s'.", name, t.Name),
					apperr.FieldError{Field: fmt.Sprintf("approverGroups[%d].approvers[%d]", i, j), Message: "not a member of the team"})
			}
			if !slices.Contains(approvers, id) {
				approvers = append(approvers, id)
			}
		}
		idx := slices.IndexFunc(t.ApproverGroups, func(g ApproverGroup) bool { return g.Name == name })
		switch {
		case idx < 0:
			t.ApproverGroups = append(t.ApproverGroups, ApproverGroup{ID: ch.ID, Name: name, Approvers: approvers})
		case ch.Approvers != nil:
			t.ApproverGroups[idx].Approvers = approvers
		}
	}
	return nil
}

// RemoveApproverGroups deletes the groups with these ids; unknown ids are ignored.
func (t *Team) RemoveApproverGroups(ids []string) {
	t.ApproverGroups = slices.DeleteFunc(t.ApproverGroups, func(g ApproverGroup) bool { return slices.Contains(ids, g.ID) })
}

// SameMembership reports whether a and b have the same members, roles and approver groups,
// in any order: whether a change touched what only owners may change.
func SameMembership(a, b Team) bool {
	roles := func(t Team) map[string]string {
		out := make(map[string]string, len(t.Members))
		for _, m := range t.Members {
			out[m.UserID] = m.Role
		}
		return out
	}
	groups := func(t Team) map[string]string {
		out := make(map[string]string, len(t.ApproverGroups))
		for _, g := range t.ApproverGroups {
			ids := slices.Clone(g.Approvers)
			slices.Sort(ids)
			out[g.ID+"\x00"+g.Name] = strings.Join(ids, ",")
		}
		return out
	}
	return maps.Equal(roles(a), roles(b)) && maps.Equal(groups(a), groups(b))
}

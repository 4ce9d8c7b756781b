package app

import (
	"context"
	"maps"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// callerPrincipal returns the principal the request acts for: 401 without one.
func callerPrincipal(ctx context.Context) (auth.Principal, error) {
	p, ok := auth.FromContext(ctx)
	if !ok || p.Type == auth.TypeAnonymous || p.Type == "" {
		return auth.Principal{}, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	return p, nil
}

// isUserKind reports whether p acts as a person: a user (possibly through a user token) or
// a signed-in session. Their ID is the user's id.
func isUserKind(p auth.Principal) bool { return p.Type == auth.TypeUser || p.Type == auth.TypeSession }

// adminOrService reports whether p may change what only admins may (quotas, team status,
// user types and statuses): holders of the admin role and Baton's own services.
func adminOrService(p auth.Principal) bool { return p.IsAdmin() || p.Type == auth.TypeService }

// userTokenAllows reports whether p, when it is a user token narrowed to some permissions,
// is still allowed resource/action. Principals that are not narrowed are.
func userTokenAllows(p auth.Principal, resource, action string) bool {
	if p.TokenID == "" || p.Type != auth.TypeUser || len(p.Permissions) == 0 {
		return true
	}
	for _, g := range p.Permissions {
		if auth.Grants(g, resource, action) {
			return true
		}
	}
	return false
}

// withStoredRole returns p with its role in t taken from t's stored members. Identity owns
// membership, so its own decisions never use a role the gateway cached before a change.
func withStoredRole(p auth.Principal, t domain.Team) auth.Principal {
	if !isUserKind(p) {
		return p
	}
	teams := maps.Clone(p.Teams)
	if teams == nil {
		teams = map[string]string{}
	}
	if role, ok := t.RoleOf(p.ID); ok && p.ID != "" {
		teams[t.Name] = role
	} else {
		delete(teams, t.Name)
	}
	p.Teams = teams
	return p
}

// requireInTeam checks that the caller may do action on resource in team t, judged with its
// stored role there; it returns that principal.
func requireInTeam(ctx context.Context, t domain.Team, resource, action string) (auth.Principal, error) {
	p, err := callerPrincipal(ctx)
	if err != nil {
		return auth.Principal{}, err
	}
	p = withStoredRole(p, t)
	return auth.Require(auth.WithPrincipal(ctx, p), auth.TeamScope(t.Name), resource, action)
}

// canManageMembers reports whether p (with its stored role) may change t's members, roles
// and approver groups: a person who owns t, or an admin. Owners hold team/write and
// team/delete there, which editors, readers and operators do not; a person's user token
// must carry both. Team, workflow and global tokens never may, whatever their permissions:
// a token is not a person, and one that could name owners could make its team anyone's.
func canManageMembers(p auth.Principal, t domain.Team) bool {
	if !mayNameMembers(p) {
		return false
	}
	p = withStoredRole(p, t)
	scope := auth.TeamScope(t.Name)
	return p.Can(scope, "team", "write") && p.Can(scope, "team", "delete")
}

// mayNameMembers reports whether p is a kind of principal that may ever change a team's
// members: people (through a user token only if it carries team/write and team/delete),
// admins (the bootstrap admin included) and Baton's own services.
func mayNameMembers(p auth.Principal) bool {
	return (isUserKind(p) || adminOrService(p)) &&
		userTokenAllows(p, "team", "write") && userTokenAllows(p, "team", "delete")
}

func errOnlyOwners(team string) error {
	return apperr.New(apperr.PermissionDenied,
		"Only an owner of team '%s' or an admin can change its members, roles and approver groups.", team)
}

func errOnlyAdmins(what string) error {
	return apperr.New(apperr.PermissionDenied, "Only an admin can change %s.", what)
}

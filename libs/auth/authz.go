package auth

import (
	"context"
	"slices"
	"strings"

	"github.com/baton-flow/baton/libs/apperr"
)

// Resources a permission names.
var Resources = []string{
	"system", "workflow", "workflowrun", "workflowtemplate", "taskrun", "task", "action", "user",
	"team", "token", "parameter", "schedule", "insights", "integration", "webhook", "queue",
}

// NamedResources are the resources a permission may narrow to one of their names,
// `<resource>:<name>/<action>`: `queue:deploy/action` lets a worker take the attempts of
// the team's queue deploy and no other, where `queue/action` covers every queue.
var NamedResources = []string{"queue"}

// Actions a permission names.
var Actions = []string{"read", "write", "delete", "action"}

// Wildcard stands for every resource or every action in a permission.
const Wildcard = "**"

// Global roles.
const (
	RoleAdmin    = "admin"
	RoleOperator = "operator"
)

// Team roles.
const (
	RoleOwner  = "owner"
	RoleEditor = "editor"
	RoleReader = "reader"
)

// GlobalRoles maps each global role to what it grants in every team and instance-wide.
var GlobalRoles = map[string][]string{
	RoleAdmin:    {"**/**"},
	RoleOperator: {"**/read", "**/write", "**/action"},
}

// TeamRoles maps each team role to what it grants inside its team.
var TeamRoles = map[string][]string{
	RoleOwner:  {"**/**"},
	RoleEditor: {"**/read", "**/write", "**/action"},
	RoleReader: {"**/read"},
}

// TeamRoleNames lists the team roles, most powerful first.
var TeamRoleNames = []string{RoleOwner, RoleEditor, RoleReader}

// ValidPermission reports whether p is `<resource>/<action>` with known parts or wildcards,
// the resource narrowed to one name (`<resource>:<name>`) where NamedResources allow it.
func ValidPermission(p string) bool {
	res, act, ok := strings.Cut(p, "/")
	if !ok {
		return false
	}
	if base, name, named := strings.Cut(res, ":"); named {
		if !slices.Contains(NamedResources, base) || !ValidResourceName(name) {
			return false
		}
		res = base
	}
	return (res == Wildcard || slices.Contains(Resources, res)) && (act == Wildcard || slices.Contains(Actions, act))
}

// ValidResourceName reports whether name may name a resource in a permission: 1 to 63
// letters, digits, '-', '_' or '.', starting with a letter or digit.
func ValidResourceName(name string) bool {
	if name == "" || len(name) > 63 || !isAlnum(name[0]) {
		return false
	}
	for i := range len(name) {
		if c := name[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Grants reports whether the permission grant covers resource/action. A resource named
// (`queue:deploy`) is covered by a grant of that name, of its whole resource (`queue`) or
// of every resource; a grant of one name covers nothing else.
func Grants(grant, resource, action string) bool {
	res, act, ok := strings.Cut(grant, "/")
	if !ok {
		return false
	}
	if act != Wildcard && act != action {
		return false
	}
	if res == Wildcard || res == resource {
		return true
	}
	base, _, named := strings.Cut(resource, ":")
	return named && res == base
}

// Named is the resource name of one resource of a kind in NamedResources, as permissions
// and checks write it: `queue:deploy`.
func Named(resource, name string) string { return resource + ":" + name }

func anyGrants(grants []string, resource, action string) bool {
	for _, g := range grants {
		if Grants(g, resource, action) {
			return true
		}
	}
	return false
}

// Scope is where an operation happens: instance-wide (zero), in a team, or in one workflow
// of a team.
type Scope struct {
	Team     string
	Workflow string
}

// TeamScope is the scope of a team.
func TeamScope(team string) Scope { return Scope{Team: team} }

// Can reports whether p may do action on resource in scope.
//
//   - Global roles (admin, operator) apply everywhere.
//   - Users and sessions get their team role's grants inside that team.
//   - Global tokens' permissions apply everywhere; team tokens' only inside their team;
//     workflow tokens' only inside their workflow.
//   - A user token acts as its user, narrowed to its permissions when it lists any.
//   - Baton's own services may do anything; anonymous callers nothing.
//   - A run's callback token nothing, whatever else the principal claims: answering its
//     run's callbacks is no resource and action, and the runs service checks that itself.
func (p Principal) Can(scope Scope, resource, action string) bool {
	switch p.Type {
	case TypeService:
		return true
	case TypeAnonymous, TypeRun, "":
		return false
	}
	if p.TokenID != "" && p.Type == TypeUser && len(p.Permissions) > 0 &&
		!anyGrants(p.Permissions, resource, action) {
		return false
	}
	for _, role := range p.Roles {
		if anyGrants(GlobalRoles[role], resource, action) {
			return true
		}
	}
	switch p.Type {
	case TypeUser, TypeSession:
		if scope.Team == "" {
			return false
		}
		role, ok := p.Teams[scope.Team]
		return ok && anyGrants(TeamRoles[role], resource, action)
	case TypeGlobal:
		return anyGrants(p.Permissions, resource, action)
	case TypeTeam:
		return scope.Team != "" && scope.Team == p.Team && anyGrants(p.Permissions, resource, action)
	case TypeWorkflow:
		return scope.Team != "" && scope.Team == p.Team && scope.Workflow == p.Workflow &&
			anyGrants(p.Permissions, resource, action)
	}
	return false
}

// SeesAllTeams reports whether p holds a global role that reaches every team.
func (p Principal) SeesAllTeams() bool {
	if p.Type == TypeRun {
		return false
	}
	return slices.Contains(p.Roles, RoleAdmin) || slices.Contains(p.Roles, RoleOperator) ||
		(p.Type == TypeGlobal && len(p.Permissions) > 0) || p.Type == TypeService
}

// Require checks that the principal of ctx may do action on resource in scope: 401 when the
// request carries none, 403 PERMISSION_DENIED when it may not.
func Require(ctx context.Context, scope Scope, resource, action string) (Principal, error) {
	p, ok := FromContext(ctx)
	if !ok || p.Type == TypeAnonymous {
		return Principal{}, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	if !p.Can(scope, resource, action) {
		where := "this instance"
		switch {
		case scope.Workflow != "":
			where = "workflow '" + scope.Team + "/" + scope.Workflow + "'"
		case scope.Team != "":
			where = "team '" + scope.Team + "'"
		}
		return Principal{}, apperr.New(apperr.PermissionDenied, "Not allowed to %s %s in %s.", action, resource, where)
	}
	return p, nil
}

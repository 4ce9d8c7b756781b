package client

import (
	"context"
	"iter"
	"net/http"
)

// TeamQuery filters a search of teams; the zero value lists the caller's teams (all of
// them for admins and operators), by name.
type TeamQuery struct {
	Labels   map[string]string
	Statuses []string // active, inactive
	Teams    []string // names
	Order    string   // ASC or DESC (default)
	Sort     string   // name (default), creationDate, status
	Page     int
	Limit    int // 1 to 1000 (default 1000)
}

// CreateTeam creates a team; a user creating it becomes its owner. createTeam.
func (c *Client) CreateTeam(ctx context.Context, t *TeamRequest) (*Team, error) {
	var out Team
	_, err := c.call(ctx, http.MethodPost, p("team"), nil, t, &out)
	return ret(&out, err)
}

// QueryTeams reads one page of teams. queryTeams.
func (c *Client) QueryTeams(ctx context.Context, q TeamQuery) (*Page[Team], error) {
	v := newQuery().labels(q.Labels).list("statuses", q.Statuses).list("teams", q.Teams).
		str("order", q.Order).str("sort", q.Sort).page(q.Page, q.Limit)
	var out Page[Team]
	_, err := c.call(ctx, http.MethodGet, p("team", "query"), v.values(), nil, &out)
	return ret(&out, err)
}

// Teams yields every team matching q.
func (c *Client) Teams(ctx context.Context, q TeamQuery) iter.Seq2[Team, error] {
	return all(ctx, q.Page, func(ctx context.Context, page int) (*Page[Team], error) {
		q.Page = page
		return c.QueryTeams(ctx, q)
	})
}

// GetTeamRoles lists the roles a team member may hold. getTeamRoles.
func (c *Client) GetTeamRoles(ctx context.Context) ([]TeamRole, error) {
	var out []TeamRole
	_, err := c.call(ctx, http.MethodGet, p("team", "roles"), nil, nil, &out)
	return out, err
}

// GetDefaultQuotas reads the quotas a new team gets. getDefaultQuotas.
func (c *Client) GetDefaultQuotas(ctx context.Context) (*Quotas, error) {
	var out Quotas
	_, err := c.call(ctx, http.MethodGet, p("team", "quotas", "default"), nil, nil, &out)
	return ret(&out, err)
}

// ValidateTeamName checks that name is free and allowed for a new team: nil when it is,
// an *Error with status 422 (TEAM_NON_UNIQUE_NAME, or reserved) when it is not.
// validateTeamName.
func (c *Client) ValidateTeamName(ctx context.Context, name string) error {
	_, err := c.call(ctx, http.MethodPost, p("team", "validate-name"), nil, TeamNameCheckRequest{Name: name}, nil)
	return err
}

// GetTeam reads a team with its members, approver groups, parameters and quotas. getTeam.
func (c *Client) GetTeam(ctx context.Context, team string) (*Team, error) {
	var out Team
	_, err := c.call(ctx, http.MethodGet, p("team", team), nil, nil, &out)
	return ret(&out, err)
}

// UpdateTeam changes what t holds of a team; fields left out are kept. updateTeam.
func (c *Client) UpdateTeam(ctx context.Context, team string, t *TeamRequest) (*Team, error) {
	var out Team
	_, err := c.call(ctx, http.MethodPatch, p("team", team), nil, t, &out)
	return ret(&out, err)
}

// DeleteTeam deletes a team and everything of it; with force its runs that have not
// completed are cancelled first (else 409 TEAM_HAS_ACTIVE_RUNS). deleteTeam.
func (c *Client) DeleteTeam(ctx context.Context, team string, force bool) error {
	_, err := c.call(ctx, http.MethodDelete, p("team", team), forceQuery(force).values(), nil, nil)
	return err
}

// DeleteApproverGroups deletes approver groups of a team by id. deleteApproverGroups.
func (c *Client) DeleteApproverGroups(ctx context.Context, team string, ids []string) error {
	_, err := c.call(ctx, http.MethodDelete, p("team", team, "approvers"), nil, ids, nil)
	return err
}

// DeleteTeamParameter deletes a parameter of a team. deleteTeamParameter.
func (c *Client) DeleteTeamParameter(ctx context.Context, team, name string) error {
	_, err := c.call(ctx, http.MethodDelete, p("team", team, "parameters", name), nil, nil, nil)
	return err
}

// LeaveTeam takes the caller out of a team (409 TEAM_LAST_OWNER for its last owner).
// leaveTeam.
func (c *Client) LeaveTeam(ctx context.Context, team string) error {
	_, err := c.call(ctx, http.MethodDelete, p("team", team, "leave"), nil, nil, nil)
	return err
}

// RemoveTeamMembers removes members from a team. removeTeamMembers.
func (c *Client) RemoveTeamMembers(ctx context.Context, team string, members []MemberRef) error {
	_, err := c.call(ctx, http.MethodDelete, p("team", team, "members"), nil, members, nil)
	return err
}

// ResetTeamQuotas sets a team's quotas back to the defaults (admins). resetTeamQuotas.
func (c *Client) ResetTeamQuotas(ctx context.Context, team string) error {
	_, err := c.call(ctx, http.MethodDelete, p("team", team, "quotas"), nil, nil, nil)
	return err
}

package app

import (
	"context"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// Profile is the caller as GET /profile shows it.
type Profile struct {
	// User is the caller's user record; for a caller that is not a person it is a
	// description of the principal (id, name, type admin/operator when it holds the role).
	User domain.User
	// PrincipalType is the caller's principal type (user, session, global, team, …).
	PrincipalType string
	Teams         []ProfileTeam
	// Permissions are the caller's grants: a global grant as is ("**/read"), a grant inside
	// one team as "<team>:<grant>" ("infra:**/**"), inside one workflow as
	// "<team>/<workflow>:<grant>". A user token's own permissions narrow them further.
	Permissions []string
}

// ProfileTeam is one team of a profile, summarized as v4's team summaries are (its record,
// and how much it holds), with the caller's role there.
type ProfileTeam struct {
	Name         string
	DisplayName  string
	CreationDate time.Time
	Status       domain.TeamStatus
	ExternalRef  string
	Labels       map[string]string
	Role         string
	Insights     TeamInsights
}

// TeamInsights counts what a team holds.
type TeamInsights struct {
	// Workflows is the team's workflow count, nil when the workflows service, which owns
	// it, could not say: a profile is read on every page of the UI and must not fail with
	// another service.
	Workflows *int
	Members   int
	// Actions counts the team's pending actions. No service holds actions yet, so there
	// are none to count.
	Actions int
}

// summaryConcurrency bounds the workflow counts one profile asks for at a time.
const summaryConcurrency = 8

// teamSummaries summarizes teams, asking for their workflow counts in parallel; role gives
// the caller's role in each.
func (s *Users) teamSummaries(ctx context.Context, teams []domain.Team, role func(domain.Team) string) []ProfileTeam {
	out := make([]ProfileTeam, len(teams))
	for i, t := range teams {
		out[i] = ProfileTeam{
			Name: t.Name, DisplayName: t.DisplayName, CreationDate: t.CreationDate, Status: t.Status,
			ExternalRef: t.ExternalRef, Labels: t.Labels, Role: role(t),
			Insights: TeamInsights{Members: len(t.Members)},
		}
	}
	if s.WorkflowCount == nil {
		return out
	}
	sem := make(chan struct{}, summaryConcurrency)
	var wg sync.WaitGroup
	for i := range out {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if n, err := s.WorkflowCount(ctx, out[i].Name); err == nil {
				out[i].Insights.Workflows = &n
			}
		})
	}
	wg.Wait()
	return out
}

// loginRecordEvery throttles lastLoginDate writes: GET /profile is called on every page
// load of the UI, and the date only needs to say roughly when someone was last seen.
const loginRecordEvery = time.Hour

// Profile returns the caller's profile. A person signing in for the first time with a
// verified email is registered (active, type user); an invited one is activated. Callers
// that are not people (tokens, services) get a read-only description of their principal.
func (s *Users) Profile(ctx context.Context) (Profile, error) {
	p, err := callerPrincipal(ctx)
	if err != nil {
		return Profile{}, err
	}
	if !isUserKind(p) {
		return s.principalProfile(ctx, p)
	}
	u, err := s.dir.callerUser(ctx, p, true)
	if err != nil {
		return Profile{}, err
	}
	now := s.dir.stamp()
	if u.LastLoginDate == nil || now.Sub(*u.LastLoginDate) >= loginRecordEvery {
		if u, err = s.users.UpdateUser(ctx, u.ID, func(u *domain.User) error {
			u.LastLoginDate = &now
			return nil
		}); err != nil {
			return Profile{}, err
		}
	}
	teams, err := s.teams.FindTeamsByMember(ctx, u.ID)
	if err != nil {
		return Profile{}, err
	}
	prof := Profile{User: u, PrincipalType: p.Type}
	for _, r := range u.Roles() {
		prof.Permissions = append(prof.Permissions, auth.GlobalRoles[r]...)
	}
	roleIn := func(t domain.Team) string {
		role, _ := t.RoleOf(u.ID)
		return role
	}
	for _, t := range teams {
		for _, g := range auth.TeamRoles[roleIn(t)] {
			prof.Permissions = append(prof.Permissions, t.Name+":"+g)
		}
	}
	prof.Teams = s.teamSummaries(ctx, teams, roleIn)
	return prof, nil
}

// principalProfile describes a caller that is not a person.
func (s *Users) principalProfile(ctx context.Context, p auth.Principal) (Profile, error) {
	prof := Profile{
		User:          domain.User{ID: p.ID, Name: p.Name, Status: domain.UserActive},
		PrincipalType: p.Type,
	}
	for _, r := range p.Roles {
		if r == auth.RoleAdmin || r == auth.RoleOperator {
			prof.User.Type = domain.UserType(r)
		}
		prof.Permissions = append(prof.Permissions, auth.GlobalRoles[r]...)
	}
	prefix := ""
	switch p.Type {
	case auth.TypeTeam:
		prefix = p.Team + ":"
	case auth.TypeWorkflow:
		prefix = p.Team + "/" + p.Workflow + ":"
	}
	for _, g := range p.Permissions {
		prof.Permissions = append(prof.Permissions, prefix+g)
	}
	if p.Team != "" {
		t, err := s.teams.FindTeamByName(ctx, p.Team)
		if err != nil {
			// The token's team is gone or unreadable: name it, as the token does.
			t = domain.Team{Name: p.Team, DisplayName: p.Team}
		}
		prof.Teams = s.teamSummaries(ctx, []domain.Team{t}, func(domain.Team) string { return "" })
	}
	return prof, nil
}

// UpdateProfile changes the caller's own name, displayName and labels. Other fields sent
// with the values they have are accepted; changing them here is refused (403).
func (s *Users) UpdateProfile(ctx context.Context, ch domain.UserChanges) error {
	p, err := callerPrincipal(ctx)
	if err != nil {
		return err
	}
	if !isUserKind(p) {
		return apperr.New(apperr.RequestInvalid,
			"Only users have a profile to change; this request authenticates as a %s principal.", p.Type)
	}
	if !userTokenAllows(p, "user", "write") {
		return apperr.New(apperr.PermissionDenied, "This token may not change the profile.")
	}
	u, err := s.dir.callerUser(ctx, p, true)
	if err != nil {
		return err
	}
	_, err = s.users.UpdateUser(ctx, u.ID, func(u *domain.User) error {
		before := *u
		if err := u.Apply(ch); err != nil {
			return err
		}
		if u.Type != before.Type || u.Status != before.Status || u.Email != before.Email {
			return apperr.New(apperr.PermissionDenied,
				"PATCH /profile changes only name, displayName and labels; an admin changes type, status and email.")
		}
		return nil
	})
	return err
}

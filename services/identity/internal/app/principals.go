package app

import (
	"context"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// Principals builds the principal a person's credentials act for, from their stored user
// record and memberships. Token introspection for the gateway answers with it.
type Principals struct {
	users UserStore
	teams TeamStore
}

// NewPrincipals returns a Principals over the stores.
func NewPrincipals(users UserStore, teams TeamStore) *Principals {
	return &Principals{users: users, teams: teams}
}

// ForUser returns the principal of the user with userID: type user, the user's id (as the
// principal's id and its person), name and email, roles from their type (admin →
// ["admin"], operator → ["operator"]) and their role in every team they belong to. Active
// and invited (pending) users have one; inactive and deleted users are refused with
// UNAUTHENTICATED; an unknown id is USER_NOT_FOUND.
func (s *Principals) ForUser(ctx context.Context, userID string) (auth.Principal, error) {
	u, err := s.users.FindUserByID(ctx, userID)
	if err != nil {
		return auth.Principal{}, err
	}
	return s.build(ctx, u)
}

// ForEmail is ForUser for the user with email (compared lower-cased), for verified JWT
// sign-ins. USER_NOT_FOUND means nobody registered with it yet: GET /profile registers
// them when called with a session principal carrying the email.
func (s *Principals) ForEmail(ctx context.Context, email string) (auth.Principal, error) {
	u, err := s.users.FindUserByEmail(ctx, email)
	if err != nil {
		return auth.Principal{}, err
	}
	return s.build(ctx, u)
}

func (s *Principals) build(ctx context.Context, u domain.User) (auth.Principal, error) {
	if !u.CanSignIn() {
		return auth.Principal{}, apperr.New(apperr.Unauthenticated, "User '%s' is %s.", u.Email, u.Status)
	}
	teams, err := s.teams.FindTeamsByMember(ctx, u.ID)
	if err != nil {
		return auth.Principal{}, err
	}
	name := u.DisplayName
	if name == "" {
		name = u.Name
	}
	p := auth.Principal{Type: auth.TypeUser, ID: u.ID, Name: name, Email: u.Email, Roles: u.Roles(), Person: u.ID}
	if len(teams) > 0 {
		p.Teams = make(map[string]string, len(teams))
		for _, t := range teams {
			if role, ok := t.RoleOf(u.ID); ok {
				p.Teams[t.Name] = role
			}
		}
	}
	return p, nil
}

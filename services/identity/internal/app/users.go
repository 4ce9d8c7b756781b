package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// UserStore keeps users.
type UserStore interface {
	// CreateUser stores a new user; a taken email fails matching domain.ErrUserEmailTaken.
	CreateUser(ctx context.Context, u domain.User) error
	// FindUserByID fails with domain.ErrUserNotFound; deleted users are found.
	FindUserByID(ctx context.Context, id string) (domain.User, error)
	// FindUserByEmail fails with domain.ErrUserNotFound.
	FindUserByEmail(ctx context.Context, email string) (domain.User, error)
	// FindUsersByIDs returns those of the users that exist.
	FindUsersByIDs(ctx context.Context, ids []string) ([]domain.User, error)
	// UpdateUser loads the user, applies fn and writes it back if nobody changed it since.
	UpdateUser(ctx context.Context, id string, fn func(*domain.User) error) (domain.User, error)
	FindUsers(ctx context.Context, f domain.UserFilter, p page.Request) ([]domain.User, int64, error)
}

// userDirectory finds and registers users; teams and profiles share it.
type userDirectory struct {
	store UserStore
	newID func() string
	now   func() time.Time
}

func (d userDirectory) stamp() time.Time { return d.now().UTC().Truncate(time.Millisecond) }

// callerUser returns the stored user a user or session principal stands for: by id, else
// by email. With register, a principal that carries an email (a verified sign-in) and has
// no record gets one, active, and an invited (pending) user becomes active: that is their
// first sign-in. Users who may not sign in are 401.
func (d userDirectory) callerUser(ctx context.Context, p auth.Principal, register bool) (domain.User, error) {
	u, err := d.store.FindUserByID(ctx, p.ID)
	if errors.Is(err, domain.ErrUserNotFound) && p.Email != "" {
		u, err = d.store.FindUserByEmail(ctx, p.Email)
		if errors.Is(err, domain.ErrUserNotFound) && register {
			u, err = d.register(ctx, p.Email, p.Name, domain.UserActive)
		}
	}
	if errors.Is(err, domain.ErrUserNotFound) {
		return domain.User{}, apperr.New(apperr.UserNotFound,
			"No user record belongs to this credential; sign in with a verified email first.")
	}
	if err != nil {
		return domain.User{}, err
	}
	if !u.CanSignIn() {
		return domain.User{}, apperr.New(apperr.Unauthenticated, "User '%s' is %s.", u.Email, u.Status)
	}
	if register && u.Status == domain.UserPending {
		return d.store.UpdateUser(ctx, u.ID, func(u *domain.User) error {
			if u.Status == domain.UserPending {
				u.Status = domain.UserActive
				if p.Name != "" {
					u.Name = p.Name
				}
				now := d.stamp()
				u.LastLoginDate = &now
			}
			return nil
		})
	}
	return u, nil
}

// register creates a user for email, or returns the one a concurrent request just created.
func (d userDirectory) register(ctx context.Context, email, name string, status domain.UserStatus) (domain.User, error) {
	u, err := domain.NewUser(d.newID(), email, name, status, d.stamp())
	if err != nil {
		return domain.User{}, err
	}
	if status == domain.UserActive {
		u.DisplayName = name
		u.LastLoginDate = &u.CreationDate
	}
	err = d.store.CreateUser(ctx, u)
	if errors.Is(err, domain.ErrUserEmailTaken) {
		return d.store.FindUserByEmail(ctx, u.Email)
	}
	if err != nil {
		return domain.User{}, err
	}
	return u, nil
}

// usersByID loads the users with these ids into a map.
func (d userDirectory) usersByID(ctx context.Context, ids []string) (map[string]domain.User, error) {
	out := map[string]domain.User{}
	if len(ids) == 0 {
		return out, nil
	}
	slices.Sort(ids)
	users, err := d.store.FindUsersByIDs(ctx, slices.Compact(ids))
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		out[u.ID] = u
	}
	return out, nil
}

// Users is the user and profile use cases.
type Users struct {
	dir   userDirectory
	users UserStore
	teams TeamStore
	// OnUserDeleted, when set, runs after a user was removed from their teams and marked
	// deleted: the place to revoke their tokens. Its failure fails the DELETE; repeating the
	// DELETE repeats every step, each of which is idempotent.
	OnUserDeleted func(ctx context.Context, userID string) error
	// WorkflowCount, when set, asks the workflows service how many workflows a team has,
	// for the profile's team summaries.
	WorkflowCount func(ctx context.Context, team string) (int, error)
}

// NewUsers returns the user use cases. newID makes record ids.
func NewUsers(users UserStore, teams TeamStore, newID func() string) *Users {
	return &Users{dir: userDirectory{store: users, newID: newID, now: time.Now}, users: users, teams: teams}
}

// isSelf reports whether p is the user with id.
func isSelf(p auth.Principal, id string) bool { return isUserKind(p) && p.ID != "" && p.ID == id }

// User returns the user with id, for holders of user/read instance-wide and the user.
func (s *Users) User(ctx context.Context, id string) (domain.User, error) {
	p, err := callerPrincipal(ctx)
	if err != nil {
		return domain.User{}, err
	}
	if !isSelf(p, id) || !userTokenAllows(p, "user", "read") {
		if _, err := auth.Require(ctx, auth.Scope{}, "user", "read"); err != nil {
			return domain.User{}, err
		}
	}
	return s.users.FindUserByID(ctx, id)
}

// UpdateUser changes the user with id: the user or holders of user/write instance-wide may;
// type, status and email change only by an admin.
func (s *Users) UpdateUser(ctx context.Context, id string, ch domain.UserChanges) error {
	p, err := callerPrincipal(ctx)
	if err != nil {
		return err
	}
	if !isSelf(p, id) || !userTokenAllows(p, "user", "write") {
		if _, err := auth.Require(ctx, auth.Scope{}, "user", "write"); err != nil {
			return err
		}
	}
	_, err = s.users.UpdateUser(ctx, id, func(u *domain.User) error {
		before := *u
		if err := u.Apply(ch); err != nil {
			return err
		}
		if !adminOrService(p) && (u.Type != before.Type || u.Status != before.Status || u.Email != before.Email) {
			return errOnlyAdmins("a user's type, status or email")
		}
		return nil
	})
	return err
}

// DeleteUser removes the user with id from their teams, marks them deleted and runs
// OnUserDeleted. Admins only; a user who is the last owner of a team is refused (409).
//
// There are no multi-document transactions: every team is checked first, then each
// membership is removed with its own conditional write (which checks again), then the user
// is marked deleted. A failure part-way leaves a state the next DELETE completes.
func (s *Users) DeleteUser(ctx context.Context, id string) error {
	p, err := auth.Require(ctx, auth.Scope{}, "user", "delete")
	if err != nil {
		return err
	}
	// Deleting a user removes their memberships, which only people and admins change: a
	// global token with user/delete is neither.
	if !adminOrService(p) {
		return apperr.New(apperr.PermissionDenied, "Only an admin can delete users.")
	}
	u, err := s.users.FindUserByID(ctx, id)
	if err != nil {
		return err
	}
	teams, err := s.teams.FindTeamsByMember(ctx, u.ID)
	if err != nil {
		return err
	}
	for _, t := range teams {
		if t.IsLastOwner(u.ID) {
			return apperr.New(apperr.TeamLastOwner,
				"User '%s' is the last owner of team '%s'; make another member owner first.", u.Email, t.Name)
		}
	}
	for _, t := range teams {
		_, err := s.teams.UpdateTeam(ctx, t.Name, func(t *domain.Team) error { return t.RemoveMembers([]string{u.ID}) })
		if err != nil && !errors.Is(err, domain.ErrTeamNotFound) {
			return fmt.Errorf("remove user %s from team %s: %w", u.ID, t.Name, err)
		}
	}
	if _, err := s.users.UpdateUser(ctx, u.ID, func(u *domain.User) error {
		u.Status = domain.UserDeleted
		return nil
	}); err != nil {
		return err
	}
	if s.OnUserDeleted != nil {
		if err := s.OnUserDeleted(ctx, u.ID); err != nil {
			return fmt.Errorf("after deleting user %s: %w", u.ID, err)
		}
	}
	return nil
}

// UserPage is a page of users and how much of them the caller may see.
type UserPage struct {
	page.Page[domain.User]
	// Limited is set for callers without user/read instance-wide: the users are the active
	// ones, and only their id, name, displayName and email may be shown.
	Limited bool
}

// FindUsers searches users. Callers without user/read instance-wide see active users only,
// with their id, name, displayName and email.
func (s *Users) FindUsers(ctx context.Context, f domain.UserFilter, pr page.Request) (UserPage, error) {
	p, err := callerPrincipal(ctx)
	if err != nil {
		return UserPage{}, err
	}
	limited := !p.Can(auth.Scope{}, "user", "read")
	if limited {
		if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, domain.UserActive) {
			return UserPage{Page: page.New([]domain.User(nil), pr, 0), Limited: true}, nil
		}
		f.Statuses = []domain.UserStatus{domain.UserActive}
	}
	users, total, err := s.users.FindUsers(ctx, f, pr)
	if err != nil {
		return UserPage{}, err
	}
	if limited {
		for i, u := range users {
			users[i] = domain.User{ID: u.ID, Email: u.Email, Name: u.Name, DisplayName: u.DisplayName}
		}
	}
	return UserPage{Page: page.New(users, pr, total), Limited: limited}, nil
}

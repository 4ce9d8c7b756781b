package app_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// principalsUsers is an in-memory app.UserStore.
type principalsUsers struct {
	mu    sync.Mutex
	users map[string]domain.User
}

func (s *principalsUsers) CreateUser(_ context.Context, u domain.User) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.users {
		if o.Email == u.Email {
			return domain.UserEmailTaken(u.Email)
		}
	}
	s.users[u.ID] = u
	return nil
}

func (s *principalsUsers) FindUserByID(_ context.Context, id string) (domain.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.users[id]; ok {
		return u, nil
	}
	return domain.User{}, domain.UserNotFound(id)
}

func (s *principalsUsers) FindUserByEmail(_ context.Context, email string) (domain.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.users {
		if u.Email == strings.ToLower(email) {
			return u, nil
		}
	}
	return domain.User{}, domain.UserNotFound(email)
}

func (s *principalsUsers) FindUsersByIDs(ctx context.Context, ids []string) ([]domain.User, error) {
	var out []domain.User
	for _, id := range ids {
		if u, err := s.FindUserByID(ctx, id); err == nil {
			out = append(out, u)
		}
	}
	return out, nil
}

func (s *principalsUsers) UpdateUser(ctx context.Context, id string, fn func(*domain.User) error) (domain.User, error) {
	u, err := s.FindUserByID(ctx, id)
	if err != nil {
		return domain.User{}, err
	}
	if err := fn(&u); err != nil {
		return domain.User{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = u
	return u, nil
}

func (s *principalsUsers) FindUsers(context.Context, domain.UserFilter, page.Request) ([]domain.User, int64, error) {
	return nil, 0, errors.New("not used")
}

// principalsTeams is an in-memory app.TeamStore.
type principalsTeams struct {
	mu    sync.Mutex
	teams map[string]domain.Team
}

func (s *principalsTeams) CreateTeam(_ context.Context, t domain.Team, _ []outbox.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.teams[t.Name] = t
	return nil
}

func (s *principalsTeams) FindTeamByName(_ context.Context, name string) (domain.Team, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.teams[name]; ok {
		return t.Clone(), nil
	}
	return domain.Team{}, domain.TeamNotFound(name)
}

func (s *principalsTeams) UpdateTeam(ctx context.Context, name string, fn func(*domain.Team) error) (domain.Team, error) {
	t, err := s.FindTeamByName(ctx, name)
	if err != nil {
		return domain.Team{}, err
	}
	if err := fn(&t); err != nil {
		return domain.Team{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.teams[name] = t
	return t, nil
}

func (s *principalsTeams) DeleteTeam(context.Context, string, func(domain.Team) ([]outbox.Entry, error)) error {
	return errors.New("not used")
}

func (s *principalsTeams) FindTeams(context.Context, domain.TeamFilter, page.Request) ([]domain.Team, int64, error) {
	return nil, 0, errors.New("not used")
}

func (s *principalsTeams) FindTeamsByMember(_ context.Context, userID string) ([]domain.Team, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Team
	for _, t := range s.teams {
		if _, ok := t.RoleOf(userID); ok {
			out = append(out, t.Clone())
		}
	}
	slices.SortFunc(out, func(a, b domain.Team) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (s *principalsTeams) TeamNameTaken(_ context.Context, name string) (bool, error) {
	_, err := s.FindTeamByName(context.Background(), name)
	return err == nil, nil
}

func seedStores(t *testing.T) (*principalsUsers, *principalsTeams) {
	t.Helper()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	users := &principalsUsers{users: map[string]domain.User{}}
	for _, u := range []domain.User{
		{ID: "u-admin", Email: "admin@example.com", Name: "Ada", DisplayName: "Ada L.", Type: domain.UserTypeAdmin, Status: domain.UserActive},
		{ID: "u-op", Email: "op@example.com", Name: "Otto", Type: domain.UserTypeOperator, Status: domain.UserActive},
		{ID: "u-dev", Email: "dev@example.com", Name: "Dev", Type: domain.UserTypeUser, Status: domain.UserActive},
		{ID: "u-new", Email: "new@example.com", Name: "new", Type: domain.UserTypeUser, Status: domain.UserPending},
		{ID: "u-off", Email: "off@example.com", Name: "Off", Type: domain.UserTypeUser, Status: domain.UserInactive},
		{ID: "u-gone", Email: "gone@example.com", Name: "Gone", Type: domain.UserTypeUser, Status: domain.UserDeleted},
	} {
		u.CreationDate = now
		require.NoError(t, users.CreateUser(context.Background(), u))
	}
	teams := &principalsTeams{teams: map[string]domain.Team{
		"infra": {Name: "infra", Members: []domain.Member{{UserID: "u-dev", Role: "owner"}, {UserID: "u-admin", Role: "reader"}}},
		"web":   {Name: "web", Members: []domain.Member{{UserID: "u-dev", Role: "editor"}, {UserID: "u-new", Role: "reader"}}},
		"other": {Name: "other", Members: []domain.Member{{UserID: "u-op", Role: "owner"}}},
	}}
	return users, teams
}

func TestPrincipalsForUserAndEmail(t *testing.T) {
	t.Parallel()
	users, teams := seedStores(t)
	ps := app.NewPrincipals(users, teams)
	tests := []struct {
		name       string
		byEmail    string
		byID       string
		want       auth.Principal
		wantReason apperr.Reason
	}{
		{name: "admin", byID: "u-admin", want: auth.Principal{
			Type: auth.TypeUser, ID: "u-admin", Person: "u-admin", Name: "Ada L.", Email: "admin@example.com",
			Roles: []string{"admin"}, Teams: map[string]string{"infra": "reader"},
		}},
		{name: "operator by email in any case", byEmail: "OP@Example.com", want: auth.Principal{
			Type: auth.TypeUser, ID: "u-op", Person: "u-op", Name: "Otto", Email: "op@example.com",
			Roles: []string{"operator"}, Teams: map[string]string{"other": "owner"},
		}},
		{name: "user in two teams", byID: "u-dev", want: auth.Principal{
			Type: auth.TypeUser, ID: "u-dev", Person: "u-dev", Name: "Dev", Email: "dev@example.com",
			Teams: map[string]string{"infra": "owner", "web": "editor"},
		}},
		{name: "invited user", byEmail: "new@example.com", want: auth.Principal{
			Type: auth.TypeUser, ID: "u-new", Person: "u-new", Name: "new", Email: "new@example.com", Teams: map[string]string{"web": "reader"},
		}},
		{name: "inactive user", byID: "u-off", wantReason: apperr.Unauthenticated},
		{name: "deleted user by email", byEmail: "gone@example.com", wantReason: apperr.Unauthenticated},
		{name: "unknown id", byID: "nope", wantReason: apperr.UserNotFound},
		{name: "unknown email", byEmail: "who@example.com", wantReason: apperr.UserNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var (
				got auth.Principal
				err error
			)
			if tt.byEmail != "" {
				got, err = ps.ForEmail(context.Background(), tt.byEmail)
			} else {
				got, err = ps.ForUser(context.Background(), tt.byID)
			}
			if tt.wantReason != (apperr.Reason{}) {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, tt.wantReason), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDeleteUserRunsTheHook(t *testing.T) {
	t.Parallel()
	adminCtx := auth.WithPrincipal(context.Background(), auth.Principal{Type: auth.TypeGlobal, ID: "b", Roles: []string{"admin"}})
	tests := []struct {
		name       string
		id         string
		hookErr    error
		wantCalled []string
		wantErr    bool
		wantReason apperr.Reason
	}{
		{name: "a reader is removed and the hook runs", id: "u-new", wantCalled: []string{"u-new"}},
		{name: "the hook's failure fails the delete", id: "u-admin", hookErr: errors.New("tokens down"), wantCalled: []string{"u-admin"}, wantErr: true},
		{name: "a last owner is refused before anything changes", id: "u-dev", wantReason: apperr.TeamLastOwner},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			users, teams := seedStores(t)
			s := app.NewUsers(users, teams, func() string { return "id" })
			var called []string
			s.OnUserDeleted = func(_ context.Context, id string) error {
				called = append(called, id)
				return tt.hookErr
			}
			err := s.DeleteUser(adminCtx, tt.id)
			assert.Equal(t, tt.wantCalled, called)
			if tt.wantReason != (apperr.Reason{}) {
				assert.True(t, apperr.HasReason(err, tt.wantReason), "%v", err)
				u, _ := users.FindUserByID(context.Background(), tt.id)
				assert.Equal(t, domain.UserActive, u.Status)
				return
			}
			if tt.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			u, err := users.FindUserByID(context.Background(), tt.id)
			require.NoError(t, err)
			assert.Equal(t, domain.UserDeleted, u.Status)
			left, err := teams.FindTeamsByMember(context.Background(), tt.id)
			require.NoError(t, err)
			assert.Empty(t, left)
		})
	}
}

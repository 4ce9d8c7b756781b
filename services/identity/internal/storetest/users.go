package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

func newUser(n int, email, name string) domain.User {
	login := at.Add(time.Hour)
	return domain.User{
		ID: id(n), Email: email, Name: name, DisplayName: "The " + name, Type: domain.UserTypeUser,
		Status: domain.UserActive, Labels: map[string]string{"dept": "ops"},
		CreationDate: at.Add(time.Duration(n) * time.Minute), LastLoginDate: &login, Version: 1,
	}
}

func createAndFindUsers(t *testing.T, s Stores) {
	ctx := context.Background()
	u := newUser(1, "ada@example.com", "ada")
	require.NoError(t, s.Users.CreateUser(ctx, u))

	got, err := s.Users.FindUserByID(ctx, u.ID)
	require.NoError(t, err)
	assert.Equal(t, u, got)
	got, err = s.Users.FindUserByEmail(ctx, "  ADA@Example.com ")
	require.NoError(t, err)
	assert.Equal(t, u, got)

	err = s.Users.CreateUser(ctx, newUser(2, "ada@example.com", "other"))
	assert.ErrorIs(t, err, domain.ErrUserEmailTaken)

	_, err = s.Users.FindUserByID(ctx, id(9))
	assert.ErrorIs(t, err, domain.ErrUserNotFound)
	_, err = s.Users.FindUserByID(ctx, "not-an-id")
	assert.ErrorIs(t, err, domain.ErrUserNotFound)
	_, err = s.Users.FindUserByEmail(ctx, "nobody@example.com")
	assert.ErrorIs(t, err, domain.ErrUserNotFound)
	_, err = s.Users.FindUserByEmail(ctx, "not an email")
	assert.ErrorIs(t, err, domain.ErrUserNotFound)

	require.NoError(t, s.Users.CreateUser(ctx, newUser(3, "bob@example.com", "bob")))
	found, err := s.Users.FindUsersByIDs(ctx, []string{id(3), id(9), "not-an-id", id(1)})
	require.NoError(t, err)
	var emails []string
	for _, u := range found {
		emails = append(emails, u.Email)
	}
	assert.ElementsMatch(t, []string{"ada@example.com", "bob@example.com"}, emails)
	none, err := s.Users.FindUsersByIDs(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, none)
}

func updateUser(t *testing.T, s Stores) {
	ctx := context.Background()
	require.NoError(t, s.Users.CreateUser(ctx, newUser(1, "ada@example.com", "ada")))
	require.NoError(t, s.Users.CreateUser(ctx, newUser(2, "bob@example.com", "bob")))

	calls := 0
	got, err := s.Users.UpdateUser(ctx, id(1), func(u *domain.User) error {
		calls++
		if calls == 1 {
			_, err := s.Users.UpdateUser(ctx, id(1), func(other *domain.User) error {
				other.DisplayName = "theirs"
				return nil
			})
			require.NoError(t, err)
		}
		u.Status = domain.UserDeleted
		u.LastLoginDate = nil
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, calls)
	assert.Equal(t, int64(3), got.Version)
	stored, err := s.Users.FindUserByID(ctx, id(1))
	require.NoError(t, err)
	assert.Equal(t, got, stored)
	assert.Equal(t, "theirs", stored.DisplayName)
	assert.Nil(t, stored.LastLoginDate)

	// A user's email changes to one nobody holds, never to another's.
	_, err = s.Users.UpdateUser(ctx, id(2), func(u *domain.User) error {
		u.Email = "ada@example.com"
		return nil
	})
	assert.ErrorIs(t, err, domain.ErrUserEmailTaken)
	_, err = s.Users.UpdateUser(ctx, id(2), func(u *domain.User) error {
		u.Email = "robert@example.com"
		return nil
	})
	require.NoError(t, err)
	moved, err := s.Users.FindUserByEmail(ctx, "robert@example.com")
	require.NoError(t, err)
	assert.Equal(t, id(2), moved.ID)
	_, err = s.Users.FindUserByEmail(ctx, "bob@example.com")
	assert.ErrorIs(t, err, domain.ErrUserNotFound)

	_, err = s.Users.UpdateUser(ctx, id(9), func(*domain.User) error { return nil })
	assert.ErrorIs(t, err, domain.ErrUserNotFound)
}

func userSearches(t *testing.T, s Stores) {
	ctx := context.Background()
	for i, name := range []string{"dan", "ada", "cy", "bob"} {
		u := newUser(i+1, name+"@example.com", name)
		if i%2 == 1 {
			u.Status = domain.UserPending
			u.Labels = map[string]string{"dept": "dev"}
		}
		require.NoError(t, s.Users.CreateUser(ctx, u))
	}
	names := func(users []domain.User) []string {
		out := []string{}
		for _, u := range users {
			out = append(out, u.Name)
		}
		return out
	}
	tests := []struct {
		name  string
		f     domain.UserFilter
		p     page.Request
		want  []string
		total int64
	}{
		{"all by name", domain.UserFilter{}, page.Request{Size: 10}, []string{"ada", "bob", "cy", "dan"}, 4},
		{"pages, descending", domain.UserFilter{}, page.Request{Number: 1, Size: 3, Desc: true}, []string{"ada"}, 4},
		{"by creation", domain.UserFilter{}, page.Request{Size: 10, Sort: "creationDate"}, []string{"dan", "ada", "cy", "bob"}, 4},
		{"ids", domain.UserFilter{IDs: []string{id(1), id(3), "not-an-id"}}, page.Request{Size: 10}, []string{"cy", "dan"}, 2},
		{"no ids", domain.UserFilter{IDs: []string{}}, page.Request{Size: 10}, []string{}, 0},
		{"status", domain.UserFilter{Statuses: []domain.UserStatus{domain.UserPending}}, page.Request{Size: 10}, []string{"ada", "bob"}, 2},
		{"labels", domain.UserFilter{Labels: map[string]string{"dept": "ops"}}, page.Request{Size: 10}, []string{"cy", "dan"}, 2},
	}
	for _, tt := range tests {
		got, total, err := s.Users.FindUsers(ctx, tt.f, tt.p)
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, names(got), tt.name)
		assert.Equal(t, tt.total, total, tt.name)
	}
}

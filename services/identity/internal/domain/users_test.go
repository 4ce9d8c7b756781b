package domain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

func TestNormalizeEmail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give, want string
		wantErr    bool
	}{
		{give: " Ann@Example.COM ", want: "ann@example.com"},
		{give: "a.b+c@sub.example.org", want: "a.b+c@sub.example.org"},
		{give: "Ann <ann@example.com>", wantErr: true},
		{give: "not an email", wantErr: true},
		{give: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			got, err := domain.NormalizeEmail(tt.give)
			if tt.wantErr {
				assert.True(t, apperr.HasReason(err, apperr.RequestInvalid), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNewUserAndRoles(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	u, err := domain.NewUser("id", "Jo@Example.com", "", domain.UserPending, now)
	require.NoError(t, err)
	assert.Equal(t, domain.User{ID: "id", Email: "jo@example.com", Name: "jo", Type: domain.UserTypeUser, Status: domain.UserPending, CreationDate: now}, u)
	assert.True(t, u.CanSignIn())
	assert.Nil(t, u.Roles())

	tests := []struct {
		typ        domain.UserType
		status     domain.UserStatus
		wantRoles  []string
		wantSignIn bool
	}{
		{domain.UserTypeAdmin, domain.UserActive, []string{"admin"}, true},
		{domain.UserTypeOperator, domain.UserInactive, []string{"operator"}, false},
		{domain.UserTypeUser, domain.UserDeleted, nil, false},
	}
	for _, tt := range tests {
		u := domain.User{Type: tt.typ, Status: tt.status}
		assert.Equal(t, tt.wantRoles, u.Roles(), tt.typ)
		assert.Equal(t, tt.wantSignIn, u.CanSignIn(), tt.status)
	}
}

func TestUserApply(t *testing.T) {
	t.Parallel()
	base := domain.User{Email: "a@example.com", Name: "A", Type: domain.UserTypeUser, Status: domain.UserActive, Labels: map[string]string{"x": "1"}}
	tests := []struct {
		name       string
		give       domain.UserChanges
		want       domain.User
		wantReason *apperr.Reason
	}{
		{"names and labels", domain.UserChanges{Name: ptr(" B "), DisplayName: ptr("Bee"), Labels: map[string]*string{"x": nil, "y": ptr("2")}},
			domain.User{Email: "a@example.com", Name: "B", DisplayName: "Bee", Type: domain.UserTypeUser, Status: domain.UserActive, Labels: map[string]string{"y": "2"}}, nil},
		{"an empty name is ignored", domain.UserChanges{Name: ptr(" ")}, base, nil},
		{"type, status and email", domain.UserChanges{Type: ptr(domain.UserTypeAdmin), Status: ptr(domain.UserInactive), Email: ptr("New@Example.com")},
			domain.User{Email: "new@example.com", Name: "A", Type: domain.UserTypeAdmin, Status: domain.UserInactive, Labels: map[string]string{"x": "1"}}, nil},
		{"restating the status", domain.UserChanges{Status: ptr(domain.UserActive)}, base, nil},
		{"unknown type", domain.UserChanges{Type: ptr(domain.UserType("root"))}, domain.User{}, &apperr.RequestInvalid},
		{"deleted only through DELETE", domain.UserChanges{Status: ptr(domain.UserDeleted)}, domain.User{}, &apperr.RequestInvalid},
		{"pending only by invitation", domain.UserChanges{Status: ptr(domain.UserPending)}, domain.User{}, &apperr.RequestInvalid},
		{"bad email", domain.UserChanges{Email: ptr("nope")}, domain.User{}, &apperr.RequestInvalid},
		{"empty label key", domain.UserChanges{Labels: map[string]*string{"": ptr("v")}}, domain.User{}, &apperr.RequestInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := base
			u.Labels = map[string]string{"x": "1"}
			err := u.Apply(tt.give)
			if tt.wantReason != nil {
				assert.True(t, apperr.HasReason(err, *tt.wantReason), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, u)
		})
	}
}

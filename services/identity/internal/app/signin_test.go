package app_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/identity/internal/app"
)

func TestPrincipalsSignIn(t *testing.T) {
	t.Parallel()
	users, teams := seedStores(t)
	ps := app.NewPrincipals(users, teams)
	tests := []struct {
		name       string
		email      string
		userName   string
		want       auth.Principal
		wantReason apperr.Reason
	}{
		{name: "a user signs in as a session with their roles and teams", email: "Dev@Example.com", userName: "ignored", want: auth.Principal{
			Type: auth.TypeSession, ID: "u-dev", Person: "u-dev", Name: "Dev", Email: "dev@example.com",
			Teams: map[string]string{"infra": "owner", "web": "editor"},
		}},
		{name: "an admin keeps the role", email: "admin@example.com", want: auth.Principal{
			Type: auth.TypeSession, ID: "u-admin", Person: "u-admin", Name: "Ada L.", Email: "admin@example.com",
			Roles: []string{"admin"}, Teams: map[string]string{"infra": "reader"},
		}},
		{name: "an invited user is known already", email: "new@example.com", want: auth.Principal{
			Type: auth.TypeSession, ID: "u-new", Person: "u-new", Name: "new", Email: "new@example.com", Teams: map[string]string{"web": "reader"},
		}},
		{name: "a first-time user has no id (nor person) yet", email: " Who@Example.com ", userName: " Who Ever ", want: auth.Principal{
			Type: auth.TypeSession, Email: "who@example.com", Name: "Who Ever",
		}},
		{name: "an inactive user", email: "off@example.com", wantReason: apperr.Unauthenticated},
		{name: "a deleted user", email: "gone@example.com", wantReason: apperr.Unauthenticated},
		{name: "not an address", email: "who", wantReason: apperr.Unauthenticated},
		{name: "no email", email: "", wantReason: apperr.Unauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ps.SignIn(context.Background(), tt.email, tt.userName)
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

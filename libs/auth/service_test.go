package auth_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

func TestRequireService(t *testing.T) {
	t.Parallel()
	runs := auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}
	tests := []struct {
		name        string
		give        context.Context
		wantErr     bool
		wantMessage string
	}{
		{name: "a service", give: auth.WithPrincipal(context.Background(), runs)},
		{name: "a user", give: auth.WithPrincipal(context.Background(), auth.Principal{Type: auth.TypeUser, ID: "u1"}),
			wantErr: true, wantMessage: "Only Baton's own services may call this, not a principal of type user."},
		{name: "anonymous", give: auth.WithPrincipal(context.Background(), auth.Anonymous),
			wantErr: true, wantMessage: "Only Baton's own services may call this, not a principal of type anonymous."},
		{name: "nobody", give: context.Background(),
			wantErr: true, wantMessage: "Only Baton's own services may call this; the request carries no principal."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := auth.RequireService(tt.give)
			if !tt.wantErr {
				require.NoError(t, err)
				assert.Equal(t, runs, p)
				return
			}
			assert.True(t, apperr.HasReason(err, apperr.PermissionDenied), "%v", err)
			var e *apperr.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.wantMessage, e.Message)
			assert.Equal(t, auth.Principal{}, p)
		})
	}
}

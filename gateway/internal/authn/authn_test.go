package authn

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

func TestBootstrap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		configured string
		credential string
		wantErr    bool
	}{
		{name: "the bootstrap token", configured: "bt-secret", credential: "bt-secret"},
		{name: "no credential", configured: "bt-secret", credential: "", wantErr: true},
		{name: "another token", configured: "bt-secret", credential: "bt-secreT", wantErr: true},
		{name: "a prefix", configured: "bt-secret", credential: "bt-", wantErr: true},
		{name: "nothing configured", configured: "", credential: "", wantErr: true},
		{name: "nothing configured, any token", configured: "", credential: "x", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := NewBootstrap(tt.configured).Authenticate(context.Background(), tt.credential)
			if tt.wantErr {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, apperr.Unauthenticated))
				assert.Equal(t, auth.Principal{}, p)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, auth.Principal{Type: "global", ID: "bootstrap", Name: "bootstrap admin", Roles: []string{"admin"}}, p)
			assert.True(t, p.IsAdmin())
		})
	}
}

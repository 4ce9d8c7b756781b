package app_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// The domain keeps its own copy of the team roles (it cannot import libs/auth); they must
// stay the roles auth grants permissions to.
func TestTeamRolesMirrorAuth(t *testing.T) {
	t.Parallel()
	assert.Equal(t, auth.TeamRoleNames, domain.TeamRoleNames)
	for _, r := range app.TeamRoles() {
		assert.Equal(t, auth.TeamRoles[r.Name], r.Permissions, r.Name)
		assert.NotEmpty(t, r.Description, r.Name)
	}
}

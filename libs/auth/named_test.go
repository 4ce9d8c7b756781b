package auth_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/auth"
)

func TestNamedResourcePermissions(t *testing.T) {
	t.Parallel()
	valid := []struct {
		perm string
		want bool
	}{
		{"queue/action", true},
		{"queue:deploy/action", true},
		{"queue:deploy.eu-1_a/**", true},
		{"queue:/action", false},
		{"queue:-x/action", false},
		{"queue:a b/action", false},
		{"queue:a/b/action", false},
		{"workflow:build/read", false},
		{"**:x/action", false},
	}
	for _, tt := range valid {
		assert.Equal(t, tt.want, auth.ValidPermission(tt.perm), tt.perm)
	}

	deploy := auth.Named("queue", "deploy")
	grants := []struct {
		grant, resource, action string
		want                    bool
	}{
		{"queue:deploy/action", deploy, "action", true},
		{"queue/action", deploy, "action", true},
		{"**/action", deploy, "action", true},
		{"**/**", deploy, "action", true},
		{"queue:build/action", deploy, "action", false},
		{"queue:deploy/read", deploy, "action", false},
		{"queue:deploy/action", "queue", "action", false},
		{"queue:deploy/action", auth.Named("queue", "deploy2"), "action", false},
		{"workflow/action", deploy, "action", false},
	}
	for _, tt := range grants {
		assert.Equal(t, tt.want, auth.Grants(tt.grant, tt.resource, tt.action), "%s covers %s/%s", tt.grant, tt.resource, tt.action)
	}

	worker := auth.Principal{Type: auth.TypeTeam, Team: "infra", TokenID: "t1", Permissions: []string{"queue:deploy/action"}}
	assert.True(t, worker.Can(auth.TeamScope("infra"), deploy, "action"))
	assert.False(t, worker.Can(auth.TeamScope("infra"), auth.Named("queue", "build"), "action"), "another queue")
	assert.False(t, worker.Can(auth.TeamScope("other"), deploy, "action"), "another team's queue of that name")
	assert.False(t, worker.Can(auth.TeamScope("infra"), "workflowrun", "read"), "nothing else")
}

package routes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

// A queue's routes are checked against the queue they name: a token of one queue works
// that queue of its team and nothing else; the team's editors work every queue.
func TestNamedRoutesCheckTheNamedResource(t *testing.T) {
	t.Parallel()
	table := Default()
	worker := &auth.Principal{Type: auth.TypeTeam, Team: "infra", TokenID: "t1", Permissions: []string{"queue:deploy/action"}}
	allQueues := &auth.Principal{Type: auth.TypeTeam, Team: "infra", TokenID: "t2", Permissions: []string{"queue/action"}}
	editor := &auth.Principal{Type: auth.TypeUser, ID: "u1", Teams: map[string]string{"infra": auth.RoleEditor}}
	reader := &auth.Principal{Type: auth.TypeUser, ID: "u2", Teams: map[string]string{"infra": auth.RoleReader}}
	tests := []struct {
		name    string
		p       *auth.Principal
		path    string
		allowed bool
	}{
		{"its queue", worker, "/api/v2/team/infra/queue/deploy/claim", true},
		{"its queue's attempt", worker, "/api/v2/team/infra/queue/deploy/attempt/r.1-1/end", true},
		{"another queue", worker, "/api/v2/team/infra/queue/build/claim", false},
		{"its queue's name in another team", worker, "/api/v2/team/other/queue/deploy/claim", false},
		{"every queue of its team", allQueues, "/api/v2/team/infra/queue/build/claim", true},
		{"an editor", editor, "/api/v2/team/infra/queue/build/attempt/r.1-1/heartbeat", true},
		{"a reader", reader, "/api/v2/team/infra/queue/build/claim", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, params, err := table.Match("POST", tt.path)
			require.NoError(t, err)
			err = r.Authorize(tt.p, &params)
			if tt.allowed {
				assert.NoError(t, err)
			} else {
				assert.True(t, apperr.HasReason(err, apperr.PermissionDenied), "%v", err)
			}
		})
	}
}

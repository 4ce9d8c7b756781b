package workflowid_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/names"
	"github.com/baton-flow/baton/libs/workflowid"
)

func TestIDsNameTheirWorkflow(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, team, workflow string }{
		{"team workflow", "infra", "build"},
		{"long names", "a-team-with-a-long-name-of-sixty-four-characters-0123456789abcd", "x-1"},
		{"template", "", "release-train"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id := workflowid.Of(tt.team, tt.workflow)
			assert.NotEqual(t, id, names.Slug(id), "an id is never a name")
			team, name, ok := workflowid.Parse(id)
			assert.True(t, ok)
			assert.Equal(t, tt.team, team)
			assert.Equal(t, tt.workflow, name)
			assert.Equal(t, tt.workflow, workflowid.Resolve(tt.team, id))
			assert.Equal(t, id, workflowid.Of(tt.team, tt.workflow), "stable")
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, team, give, want string }{
		{"a name", "infra", "build", "build"},
		{"an id of the team", "infra", workflowid.Of("infra", "build"), "build"},
		{"an id of another team", "infra", workflowid.Of("web", "build"), workflowid.Of("web", "build")},
		{"a template's id in a team", "infra", workflowid.Of("", "build"), workflowid.Of("", "build")},
		{"team/name of the team", "infra", "infra/build", "build"},
		{"team/name of another team", "infra", "web/build", "web/build"},
		{"not base64", "infra", "wf_***", "wf_***"},
		{"prefix only", "infra", "wf_", "wf_"},
		{"a template's id", "", workflowid.Of("", "t"), "t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, workflowid.Resolve(tt.team, tt.give))
		})
	}
}

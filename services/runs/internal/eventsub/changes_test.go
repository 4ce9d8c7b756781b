package eventsub_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/runs/internal/eventsub"
)

// changes records what RunChanges says.
type changes struct{ runs, teams []string }

func (c *changes) ChangedIn(run string, team func() string) {
	c.runs = append(c.runs, run)
	c.teams = append(c.teams, team())
}

func TestEachStatusEventSaysWhichRunChanged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, typ, subject string
		data               any
		wantRun, wantTeam  string
	}{
		{"a run's", events.TypeStatusWorkflowRun, "/workflowrun/r1/status/running",
			events.WorkflowRun{ID: "r1", Team: "infra"}, "r1", "infra"},
		{"a task run's", events.TypeStatusTaskRun, "/workflowrun/r1/taskrun/r1.2/status/succeeded",
			events.TaskRun{ID: "r1.2", WorkflowRunRef: "r1"}, "r1", ""},
		{"an action's", events.TypeStatusAction, "/action/a1/status/submitted",
			map[string]string{"id": "a1", "team": "infra", "workflowRunRef": "r1"}, "r1", "infra"},
		{"another type", events.TypeTaskDispatch, "", map[string]string{}, "", ""},
		{"a subject of no run", events.TypeStatusWorkflowRun, "/elsewhere/r1", events.WorkflowRun{ID: "r1"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := events.New("e1", events.Source("runs"), tt.typ, tt.subject, tt.data)
			require.NoError(t, err)
			var c changes
			require.NoError(t, eventsub.RunChanges(&c)(t.Context(), e))
			if tt.wantRun == "" {
				assert.Empty(t, c.runs)
				return
			}
			assert.Equal(t, []string{tt.wantRun}, c.runs)
			assert.Equal(t, []string{tt.wantTeam}, c.teams)
		})
	}
}

package httpapi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// A workflow version's contract answer is byte for byte the workflow document, which is
// what the runs service reads from it.
func TestVersionViewIsTheDocument(t *testing.T) {
	t.Parallel()
	at := domain.NewTime(time.Date(2025, 3, 14, 15, 9, 26, 535000000, time.UTC))
	tests := []struct {
		name string
		give string
	}{
		{"every member, unknown ones included", `{
			"name": "build", "displayName": "Build", "status": "active", "icon": "hammer",
			"description": "Builds it", "markdown": "# Build", "labels": {"tier": "1"},
			"annotations": {"owner": "platform"}, "timeout": 60, "retries": 1,
			"params": [{"name": "branch", "default": "main"}, {"key": "token", "type": "password", "defaultValue": "s3cret", "ui": {"w": 2}}],
			"workspaces": [{"name": "src"}],
			"triggers": {"manual": {"enabled": true}, "github": {"enabled": true, "conditions": [{"field": "$.ref", "operation": "in", "values": ["a", "b"]}]},
				"slack": {"enabled": false}},
			"tasks": [
				{"name": "start", "type": "start"},
				{"name": "compile", "type": "template", "taskRef": "platform/compile", "taskVersion": 4, "timeout": 10,
					"retries": 2, "retryDelay": 30, "join": "all",
					"dependencies": [{"taskRef": "start", "executionCondition": "success", "edgeId": "e1"}],
					"params": [{"name": "branch", "value": "$(params.branch)"}], "results": [{"name": "artifact"}],
					"labels": {"lang": "go"}, "annotations": {"position": {"x": 1, "y": 2}}, "designerNote": "keep"},
				{"name": "end", "type": "end", "dependencies": [{"taskRef": "compile", "decisionCondition": "ok\nfine"}]}
			],
			"designer": {"zoom": 1.5}
		}`},
		{"codehost and github both", `{"name": "w", "triggers": {"codehost": {"enabled": true}, "github": {"enabled": false}}}`},
		{"a bare workflow", `{"name": "w"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var w domain.Workflow
			require.NoError(t, json.Unmarshal([]byte(tt.give), &w))
			w.ID, w.Team, w.Version, w.CreationDate = "d2f1c0a9b8e7", "platform", 3, at
			w.Changelog = &domain.Changelog{Author: "Ada", Reason: "faster", Date: at}

			want, err := json.Marshal(w)
			require.NoError(t, err)
			got, err := json.Marshal(versionView(w))
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

// A version read with its tasks as stored writes them as they are, like the document.
func TestVersionViewOfRawTasks(t *testing.T) {
	t.Parallel()
	w := domain.Workflow{Name: "w", RawTasks: json.RawMessage(`[{"name":"start","type":"start","x":1}]`),
		Extra: domain.Extra{"designer": json.RawMessage(`{}`)}}
	want, err := json.Marshal(w)
	require.NoError(t, err)
	got, err := json.Marshal(versionView(w))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.NotContains(t, w.Extra, "tasks", "the workflow's own extras are left alone")
}

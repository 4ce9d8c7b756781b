package httpapi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/tasksapi"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
	"github.com/baton-flow/baton/services/tasks/internal/taskjson"
)

// The resolve contract's answer is the task's JSON form, and the contract's type reads it
// whole: decoded and written again it is the same bytes, which is what the runs and
// workflows services read from it.
func TestResolvedIsTheTaskJSON(t *testing.T) {
	t.Parallel()
	minLen := 8
	at := time.Date(2025, 3, 14, 15, 9, 26, 535000000, time.UTC)
	rich := domain.Task{
		Name: "compile", DisplayName: "Compile", Description: "Compiles", Type: "template", Version: 4,
		Status: domain.Status("active"), Scope: domain.Scope("team"), Team: "platform", CreationDate: at,
		Category: "build", Icon: "hammer", Verified: true, Labels: map[string]string{"lang": "go"},
		Annotations: map[string]json.RawMessage{"docs": json.RawMessage(`"https://example.com"`)},
		Changelog:   domain.Changelog{Author: "Ada", Reason: "faster", Date: at},
		Spec: domain.Spec{
			Image: "golang:1.25", Command: []string{"go"}, Arguments: []string{"build"}, Script: "make",
			WorkingDir: "/src", Envs: []domain.Env{{Name: "A", Value: "1"}},
			Params: []domain.Param{
				{Name: "token", Type: "password", Default: json.RawMessage(`"s3cret"`), MinValueLength: &minLen,
					Options: []domain.ParamOption{{Key: "a", Value: "A"}}, Extra: map[string]json.RawMessage{"ui": json.RawMessage(`{"w":2}`)}},
			},
			Results:    []domain.Result{{Name: "binary", Type: "string", Extra: map[string]json.RawMessage{"format": json.RawMessage(`"path"`)}}},
			Workspaces: []domain.Workspace{{Name: "src", MountPath: "/src", ReadOnly: true}},
			StepName:   "compile",
			Extra:      map[string]json.RawMessage{"securityContext": json.RawMessage(`{"runAsUser":1000}`)},
		},
		Extra: map[string]json.RawMessage{"designer": json.RawMessage(`{"color":"blue"}`)},
	}
	tests := []struct {
		name string
		give domain.Task
	}{
		{"every member", rich},
		{"a bare task", domain.Task{Name: "sleep", Type: "template", Version: 1, Status: domain.Status("active"), Scope: domain.Scope("global")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want, err := json.Marshal(taskjson.FromDomain(tt.give))
			require.NoError(t, err)
			var read tasksapi.Task
			require.NoError(t, json.Unmarshal(want, &read))
			got, err := json.Marshal(read)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

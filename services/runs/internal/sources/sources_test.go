package sources

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/tasksapi"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// The contract's answers, turned into the runs service's types, say what the documents
// they carry say: every field a run reads, and no other.
func TestContractAnswersBecomeTheRunsTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, fixture string
		convert       func(raw []byte) (any, error)
		decode        func(raw []byte) (any, error)
	}{
		{
			name: "workflow version", fixture: "../../../../libs/workflowsapi/testdata/workflow-version.json",
			convert: func(raw []byte) (any, error) {
				var v workflowsapi.RunnableVersion
				err := json.Unmarshal(raw, &v)
				return definition(v), err
			},
			decode: func(raw []byte) (any, error) {
				var d domain.Definition
				err := json.Unmarshal(raw, &d)
				return &d, err
			},
		},
		{
			name: "catalogue task", fixture: "../../../../libs/tasksapi/testdata/task.json",
			convert: func(raw []byte) (any, error) {
				var task tasksapi.Task
				err := json.Unmarshal(raw, &task)
				return spec(task.Spec), err
			},
			decode: func(raw []byte) (any, error) {
				var task struct {
					Spec domain.Spec `json:"spec"`
				}
				err := json.Unmarshal(raw, &task)
				return task.Spec, err
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(tt.fixture)
			require.NoError(t, err)
			got, err := tt.convert(raw)
			require.NoError(t, err)
			want, err := tt.decode(raw)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

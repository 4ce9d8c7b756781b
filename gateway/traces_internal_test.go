package gateway

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFiberPattern(t *testing.T) {
	t.Parallel()
	tests := []struct{ give, want string }{
		{"/api/v2/team/{team}/workflow/{name}/submit", "/api/v2/team/:team/workflow/:name/submit"},
		{"/api/v2/team/{team}/workflowrun/{workflowRunId}", "/api/v2/team/:team/workflowrun/:workflowRunId"},
		{"/api/v2/team", "/api/v2/team"},
		{"/api/v2/{x}", "/api/v2/:x"},
		{"/odd/}{", "/odd/}{"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, fiberPattern(tt.give), tt.give)
	}
}

package standalone

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The workflows service gets a SQLite file of its own in a new data directory, and in one
// that has it already; a data directory whose embedded MongoDB holds the workflows
// database from an earlier version keeps it there.
func TestWorkflowsDatabaseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		files  []string
		wantOK bool
	}{
		{"a new data directory", nil, true},
		{"a data directory with the file", []string{"workflows.db", "mongo/baton_workflows.sqlite"}, true},
		{"workflows kept in the embedded database", []string{"mongo/baton_workflows.sqlite", "mongo/baton_identity.sqlite"}, false},
		{"only the runs kept there", []string{"mongo/baton_runs.sqlite"}, true},
		{"another prefix's workflows", []string{"mongo/other_workflows.sqlite"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, f := range tt.files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o600))
			}
			url, ok, err := workflowsDatabaseURL(dir, filepath.Join(dir, "mongo"), "baton_")
			require.NoError(t, err)
			assert.Equal(t, tt.wantOK, ok)
			if tt.wantOK {
				assert.Equal(t, "sqlite:"+filepath.Join(dir, "workflows.db"), url)
			}
		})
	}
}

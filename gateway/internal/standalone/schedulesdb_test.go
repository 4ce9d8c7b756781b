package standalone

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The schedules service gets a SQLite file of its own in a new data directory, and in
// one that has it already; a data directory whose embedded MongoDB holds the schedules
// database from an earlier version keeps it there; a store set by the environment is
// left as it is.
func TestSchedulesDatabase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		files  []string
		env    string
		wantOK bool
	}{
		{"a new data directory", nil, "", true},
		{"a data directory with the file", []string{"schedules.db", "mongo/baton_schedules.sqlite"}, "", true},
		{"schedules kept in the embedded database", []string{"mongo/baton_schedules.sqlite", "mongo/baton_runs.sqlite"}, "", false},
		{"another prefix's schedules", []string{"mongo/other_schedules.sqlite"}, "", true},
		{"another service's database only", []string{"mongo/baton_runs.sqlite"}, "", true},
		{"a store set by the environment", nil, "sqlite:/elsewhere/s.db", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, f := range tt.files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o600))
			}
			env := map[string]string{"BATON_SCHEDULES_DATABASE_URL": tt.env}
			overrides := map[string]string{}
			require.NoError(t, schedulesDatabase(dir, filepath.Join(dir, "mongo"), "baton_", func(k string) string { return env[k] }, overrides))
			url, ok := overrides["BATON_SCHEDULES_DATABASE_URL"]
			assert.Equal(t, tt.wantOK, ok)
			if tt.wantOK {
				assert.Equal(t, "sqlite:"+filepath.Join(dir, "schedules.db"), url)
			}
		})
	}
}

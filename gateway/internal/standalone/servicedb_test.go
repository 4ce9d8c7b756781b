package standalone

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each service with a SQLite store of its own gets its file in a new data directory and
// in one that has it already; a data directory whose embedded MongoDB holds the service's
// database from an earlier version keeps that service there, and the others move on.
func TestOwnDatabaseURLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files []string
		env   map[string]string
		want  map[string]string
	}{
		{"a new data directory", nil, nil,
			map[string]string{"BATON_RUNS_DATABASE_URL": "runs.db", "BATON_IDENTITY_DATABASE_URL": "identity.db", "BATON_TASKS_DATABASE_URL": "tasks.db",
				"BATON_WORKFLOWS_DATABASE_URL": "workflows.db", "BATON_SCHEDULES_DATABASE_URL": "schedules.db", "BATON_INTEGRATIONS_DATABASE_URL": "integrations.db"}},
		{"identity and tasks kept in the embedded database", []string{"mongo/baton_identity.sqlite", "mongo/baton_tasks.sqlite", "mongo/baton_workflows.sqlite"}, nil,
			map[string]string{"BATON_RUNS_DATABASE_URL": "runs.db", "BATON_SCHEDULES_DATABASE_URL": "schedules.db", "BATON_INTEGRATIONS_DATABASE_URL": "integrations.db"}},
		{"identity's file there already", []string{"identity.db", "mongo/baton_identity.sqlite", "mongo/baton_runs.sqlite", "mongo/baton_tasks.sqlite"}, nil,
			map[string]string{"BATON_IDENTITY_DATABASE_URL": "identity.db", "BATON_WORKFLOWS_DATABASE_URL": "workflows.db", "BATON_SCHEDULES_DATABASE_URL": "schedules.db",
				"BATON_INTEGRATIONS_DATABASE_URL": "integrations.db"}},
		{"schedules kept in the embedded database", []string{"mongo/baton_schedules.sqlite"}, nil,
			map[string]string{"BATON_RUNS_DATABASE_URL": "runs.db", "BATON_IDENTITY_DATABASE_URL": "identity.db", "BATON_TASKS_DATABASE_URL": "tasks.db",
				"BATON_WORKFLOWS_DATABASE_URL": "workflows.db", "BATON_INTEGRATIONS_DATABASE_URL": "integrations.db"}},
		{"schedules' file there already", []string{"schedules.db", "mongo/baton_schedules.sqlite"}, nil,
			map[string]string{"BATON_RUNS_DATABASE_URL": "runs.db", "BATON_IDENTITY_DATABASE_URL": "identity.db", "BATON_TASKS_DATABASE_URL": "tasks.db",
				"BATON_WORKFLOWS_DATABASE_URL": "workflows.db", "BATON_SCHEDULES_DATABASE_URL": "schedules.db", "BATON_INTEGRATIONS_DATABASE_URL": "integrations.db"}},
		{"integrations kept in the embedded database", []string{"mongo/baton_integrations.sqlite"}, nil,
			map[string]string{"BATON_RUNS_DATABASE_URL": "runs.db", "BATON_IDENTITY_DATABASE_URL": "identity.db", "BATON_TASKS_DATABASE_URL": "tasks.db",
				"BATON_WORKFLOWS_DATABASE_URL": "workflows.db", "BATON_SCHEDULES_DATABASE_URL": "schedules.db"}},
		{"integrations' file there already", []string{"integrations.db", "mongo/baton_integrations.sqlite"}, nil,
			map[string]string{"BATON_RUNS_DATABASE_URL": "runs.db", "BATON_IDENTITY_DATABASE_URL": "identity.db", "BATON_TASKS_DATABASE_URL": "tasks.db",
				"BATON_WORKFLOWS_DATABASE_URL": "workflows.db", "BATON_SCHEDULES_DATABASE_URL": "schedules.db", "BATON_INTEGRATIONS_DATABASE_URL": "integrations.db"}},
		{"another prefix's identity", []string{"mongo/other_identity.sqlite"}, nil,
			map[string]string{"BATON_RUNS_DATABASE_URL": "runs.db", "BATON_IDENTITY_DATABASE_URL": "identity.db", "BATON_TASKS_DATABASE_URL": "tasks.db",
				"BATON_WORKFLOWS_DATABASE_URL": "workflows.db", "BATON_SCHEDULES_DATABASE_URL": "schedules.db", "BATON_INTEGRATIONS_DATABASE_URL": "integrations.db"}},
		{"a URL configured is kept", nil, map[string]string{"BATON_IDENTITY_DATABASE_URL": "sqlite:/elsewhere.db", "BATON_SCHEDULES_DATABASE_URL": "sqlite:/s.db",
			"BATON_INTEGRATIONS_DATABASE_URL": "sqlite:/i.db"},
			map[string]string{"BATON_RUNS_DATABASE_URL": "runs.db", "BATON_TASKS_DATABASE_URL": "tasks.db", "BATON_WORKFLOWS_DATABASE_URL": "workflows.db"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, f := range tt.files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o600))
			}
			overrides := map[string]string{}
			require.NoError(t, ownDatabaseURLs(func(k string) string { return tt.env[k] }, overrides, dir, filepath.Join(dir, "mongo"), "baton_"))
			want := map[string]string{}
			for k, file := range tt.want {
				want[k] = "sqlite:" + filepath.Join(dir, file)
			}
			assert.Equal(t, want, overrides)
		})
	}
}

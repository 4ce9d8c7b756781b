package tasks_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/tasks"
)

// The service's own tests of the catalogue pass on a SQLite file of its own, with no
// MongoDB: versions and their history, searches, concurrent changes, the seeded catalogue
// across restarts, and password parameters sealed in the file.
func TestServiceOnSQLite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		test func(t *testing.T, f *fixture)
	}{
		{"team task lifecycle", teamTaskLifecycle},
		{"query", query},
		{"concurrent versions", concurrentVersionsAreNotLost},
		{"catalogue seeding", catalogueSeeding},
		{"password parameters", passwordParamsAreSealedMaskedAndKept},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.test(t, newFixtureOn(t, "sqlite:"+filepath.Join(t.TempDir(), "tasks.db")))
		})
	}
}

// The database URL names a SQLite file or nothing; anything else stops the start, before
// any data could go where it was not meant to.
func TestDatabaseURLIsChecked(t *testing.T) {
	t.Parallel()
	const key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	tests := []struct {
		url  string
		want string
		ok   bool
	}{
		{"", "", true},
		{"sqlite:/data/tasks.db", "sqlite:/data/tasks.db", true},
		{"  file:tasks.db ", "file:tasks.db", true},
		{"mongodb://localhost", "", false},
		{"sqlite:/data/tasks.db?_pragma=synchronous(OFF)", "", false},
	}
	for _, tt := range tests {
		cfg, err := tasks.ConfigFromEnv(func(k string) string {
			return map[string]string{"BATON_SECRET_KEY": key, tasks.DatabaseURLEnv: tt.url}[k]
		})
		if !tt.ok {
			assert.ErrorContains(t, err, "BATON_TASKS_DATABASE_URL", tt.url)
			continue
		}
		require.NoError(t, err, tt.url)
		assert.Equal(t, tt.want, cfg.DatabaseURL)
	}
}

package tasks_test

import (
	"path/filepath"
	"testing"
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

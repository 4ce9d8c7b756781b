package identity_test

import (
	"path/filepath"
	"testing"
)

// The service's own tests of teams and tokens pass on a SQLite file of its own, with no
// MongoDB: teams' events leave through the file's outbox, tokens authenticate by their
// hash, users' tokens are revoked with them.
func TestServiceOnSQLite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		test func(t *testing.T, f *fixture)
	}{
		{"teams", teamsLifecycle},
		{"tokens", tokensLifecycle},
		{"authentication", internalAuthenticate},
		{"user tokens", userTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.test(t, newFixtureOn(t, "sqlite:"+filepath.Join(t.TempDir(), "identity.db"), nil))
		})
	}
}

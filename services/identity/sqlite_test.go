package identity_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/identity"
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
		{"sqlite:/data/identity.db", "sqlite:/data/identity.db", true},
		{"  file:identity.db ", "file:identity.db", true},
		{"mongodb://localhost", "", false},
		{"sqlite:/data/identity.db?_pragma=synchronous(OFF)", "", false},
	}
	for _, tt := range tests {
		cfg, err := identity.ConfigFromEnv(func(k string) string {
			return map[string]string{"BATON_SECRET_KEY": key, identity.DatabaseURLEnv: tt.url}[k]
		})
		if !tt.ok {
			assert.ErrorContains(t, err, "BATON_IDENTITY_DATABASE_URL", tt.url)
			continue
		}
		require.NoError(t, err, tt.url)
		assert.Equal(t, tt.want, cfg.DatabaseURL)
	}
}

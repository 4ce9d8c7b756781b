package schedules

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/secrets"
)

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("ab", secrets.KeySize)
	tests := []struct {
		name string
		env  map[string]string
		ok   bool
	}{
		{"the key", map[string]string{secrets.EnvKey: key}, true},
		{"no key", map[string]string{}, false},
		{"a short key", map[string]string{secrets.EnvKey: "abcd"}, false},
	}
	for _, tt := range tests {
		cfg, err := ConfigFromEnv(func(k string) string { return tt.env[k] })
		if !tt.ok {
			require.Error(t, err, tt.name)
			assert.Contains(t, err.Error(), secrets.EnvKey, tt.name)
			continue
		}
		require.NoError(t, err, tt.name)
		assert.Equal(t, key, cfg.SecretKey)
		assert.Equal(t, "baton-schedules", cfg.GroupID)
	}
}

func TestConfigFromEnvDatabaseURL(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("ab", secrets.KeySize)
	tests := []struct {
		give string
		ok   bool
	}{
		{"", true},
		{"sqlite:/var/lib/baton/schedules.db", true},
		{"file:schedules.db", true},
		{"sqlite:/var/lib/baton/schedules.db?_pragma=synchronous(OFF)", false},
		{"mongodb://localhost:27017", false},
	}
	for _, tt := range tests {
		env := map[string]string{secrets.EnvKey: key, DatabaseURLEnv: tt.give}
		cfg, err := ConfigFromEnv(func(k string) string { return env[k] })
		if !tt.ok {
			require.Error(t, err, tt.give)
			assert.Contains(t, err.Error(), DatabaseURLEnv)
			continue
		}
		require.NoError(t, err, tt.give)
		assert.Equal(t, tt.give, cfg.DatabaseURL, tt.give)
	}
}

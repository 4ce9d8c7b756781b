package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/cli/config"
)

func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestResolve(t *testing.T) {
	t.Parallel()
	f := &config.File{CurrentContext: "local", Contexts: []config.Context{
		{Name: "local", Server: "http://127.0.0.1:8080", Token: "t-local", Team: "infra"},
		{Name: "prod", Server: "https://baton.example.com/api/v2/", Token: "t-prod"},
	}}
	tests := []struct {
		name    string
		named   string
		env     map[string]string
		want    config.Context
		wantErr string
	}{
		{name: "current context", want: f.Contexts[0]},
		{name: "named context, its server normalized", named: "prod",
			want: config.Context{Name: "prod", Server: "https://baton.example.com", Token: "t-prod"}},
		{name: "BATON_CONTEXT when no flag", env: map[string]string{config.EnvContext: "prod"},
			want: config.Context{Name: "prod", Server: "https://baton.example.com", Token: "t-prod"}},
		{name: "the flag before BATON_CONTEXT", named: "local", env: map[string]string{config.EnvContext: "prod"}, want: f.Contexts[0]},
		{name: "environment overrides the context",
			env:  map[string]string{config.EnvServer: "http://10.0.0.1:9000", config.EnvToken: "t-env", config.EnvTeam: "ops"},
			want: config.Context{Name: "local", Server: "http://10.0.0.1:9000", Token: "t-env", Team: "ops"}},
		{name: "unknown named context", named: "staging", wantErr: `no context named "staging"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := f.Resolve(tt.named, envOf(tt.env))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Contains(t, err.Error(), "baton login")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestResolveWithoutServer(t *testing.T) {
	t.Parallel()
	_, err := (&config.File{}).Resolve("", envOf(nil))
	require.ErrorIs(t, err, config.ErrNoServer)
	assert.Contains(t, err.Error(), "baton login --server URL --token TOKEN")

	got, err := (&config.File{}).Resolve("", envOf(map[string]string{config.EnvServer: "localhost:8080", config.EnvToken: "t"}))
	require.NoError(t, err)
	assert.Equal(t, config.Context{Server: "http://localhost:8080", Token: "t"}, got)
}

func TestNormalizeServer(t *testing.T) {
	t.Parallel()
	tests := []struct{ give, want string }{
		{"http://127.0.0.1:8080/api/v2", "http://127.0.0.1:8080"},
		{"127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"localhost:8080/", "http://localhost:8080"},
		{"baton.example.com", "https://baton.example.com"},
		{"https://example.com/baton/api/v2/", "https://example.com/baton"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, config.NormalizeServer(tt.give), tt.give)
	}
}

// TestSaveIsPrivate: the file holds tokens, so only its user reads it, and its directory
// is made only for them.
func TestSaveIsPrivate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "baton", "config.yaml")
	f, err := config.Load(path)
	require.NoError(t, err)
	assert.Empty(t, f.Contexts, "a missing file is an empty configuration")

	f.Put(config.Context{Name: "a", Server: "http://a", Token: "ta"})
	f.Put(config.Context{Name: "b", Server: "http://b", Token: "tb"})
	f.Put(config.Context{Name: "a", Server: "http://a2", Token: "ta2"})
	f.CurrentContext = "a"
	require.NoError(t, config.Save(path, f))

	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	dir, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), dir.Mode().Perm())

	back, err := config.Load(path)
	require.NoError(t, err)
	assert.Equal(t, f, back)
	assert.Len(t, back.Contexts, 2, "putting a context of a kept name replaces it")

	assert.True(t, back.Delete("a"))
	assert.Empty(t, back.CurrentContext, "deleting the current context leaves none current")
	assert.False(t, back.Delete("a"))
}

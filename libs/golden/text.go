package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MatchText compares got, any text (a command's output), with the fixture
// testdata/<name>.golden byte for byte, and returns the fixture. Under -update it first
// writes the fixture from got.
func MatchText(t testing.TB, name string, got []byte) []byte {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create the fixture")
	assert.Equal(t, string(want), string(got), "output changed; if intended, run go test -update")
	return want
}

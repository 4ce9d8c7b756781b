package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConsulBinaryMissing(t *testing.T) {
	t.Setenv(EnvConsulBin, filepath.Join(t.TempDir(), "consul"))
	_, err := consulBinary()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "make tools")
}

func TestRepoRoot(t *testing.T) {
	t.Parallel()
	root, err := repoRoot()
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.work"))
	require.NoError(t, err)
	wd, err := os.Getwd()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(wd, root), "%s is not under %s", wd, root)
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	t.Parallel()
	b := &tailBuffer{max: 5}
	for _, s := range []string{"abc", "defg", "h"} {
		_, _ = b.Write([]byte(s))
	}
	assert.Equal(t, "defgh", b.String())
}

func TestFreePortsDistinct(t *testing.T) {
	t.Parallel()
	ports, err := freePorts(4)
	require.NoError(t, err)
	seen := map[int]bool{}
	for _, p := range ports {
		assert.False(t, seen[p], "port %d twice", p)
		seen[p] = true
	}
}

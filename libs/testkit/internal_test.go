package testkit

import (
	"os"
	"path/filepath"
	"strconv"
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

func TestRemoveOrphanMongoDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)  // os.TempDir reads it: keep real temp dirs out of this
	dirs := map[string]bool{ // name → wants to survive
		mongoDirPrefix + "99999999-123":                     false, // no such process
		mongoDirPrefix + strconv.Itoa(os.Getpid()) + "-456": true,
		mongoDirPrefix + "notapid":                          true,
		"unrelated-99999999-1":                              true,
	}
	for name := range dirs {
		require.NoError(t, os.Mkdir(filepath.Join(tmp, name), 0o700))
	}

	removeOrphanMongoDirs()

	for name, survive := range dirs {
		_, err := os.Stat(filepath.Join(tmp, name))
		assert.Equal(t, survive, err == nil, name)
	}
}

package testkit

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
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

// An agent that lost its HTTP port to another test binary's agent must not take that
// agent's answers for its own.
func TestWaitConsulLeaderChecksWhoAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		want    string
		wantErr string
	}{
		{name: "any leader", want: ""},
		{name: "this agent's leader", want: "127.0.0.1:41000"},
		{name: "another agent's leader", want: "127.0.0.1:42000", wantErr: "not this agent's 127.0.0.1:42000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			// A refused leader is polled again: the second poll is sent only once the first
			// answer has been judged, so it ends the wait.
			var polls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if polls.Add(1) == 2 {
					cancel()
				}
				_, _ = io.WriteString(w, `"127.0.0.1:41000"`)
			}))
			t.Cleanup(srv.Close)
			err := waitConsulLeader(ctx, strings.TrimPrefix(srv.URL, "http://"), tt.want, nil)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorIs(t, err, context.Canceled)
		})
	}
}

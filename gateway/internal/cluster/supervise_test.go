package cluster

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// supervised makes a cluster of one process running sh -c script, not started.
func supervised(t *testing.T, script string) *Cluster {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p := &Proc{Name: "p", Service: "p", Log: filepath.Join(t.TempDir(), "p.log"), bin: "/bin/sh", args: []string{"-c", script},
		ready: func(context.Context) error { return nil }}
	c := &Cluster{procs: []*Proc{p}, out: io.Discard, ctx: ctx, cancel: cancel}
	return c
}

// A process killed stays down, counted as killed, until started again; one that exits on
// its own is started again by the supervisor and counted as such.
func TestSupervisor(t *testing.T) {
	t.Parallel()
	t.Run("killed and started", func(t *testing.T) {
		t.Parallel()
		c := supervised(t, "exec sleep 60")
		ctx := context.Background()
		require.NoError(t, c.Start(ctx, "p"))
		require.NoError(t, c.Kill("p"))
		p := c.Proc("p")
		p.mu.Lock()
		assert.Nil(t, p.cmd, "down after the kill")
		p.mu.Unlock()
		require.NoError(t, c.Start(ctx, "p"))
		assert.Equal(t, []Stats{{Name: "p", Starts: 2, Kills: 1}}, c.Stats())
		c.Stop()
		assert.Equal(t, []Stats{{Name: "p", Starts: 2, Kills: 1}}, c.Stats(), "a stop is not a failure")
	})
	t.Run("exits on its own", func(t *testing.T) {
		t.Parallel()
		c := supervised(t, "exit 3")
		require.NoError(t, c.Start(context.Background(), "p"))
		assert.Eventually(t, func() bool {
			s := c.Stats()[0]
			return s.Failures >= 2 && s.Starts >= 2
		}, 30*time.Second, 50*time.Millisecond, "started again after each exit")
		c.Stop()
		assert.Contains(t, tail(c.Proc("p").Log, 50), "exit status 3")
	})
	t.Run("unknown", func(t *testing.T) {
		t.Parallel()
		c := supervised(t, "true")
		assert.Error(t, c.Kill("nope"))
		assert.Error(t, c.Start(context.Background(), "nope"))
	})
}

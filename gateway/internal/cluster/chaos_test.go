package cluster

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Environment variables of TestChaos.
const (
	// envChaosTest runs it: make test sets it, after building the binaries into
	// envClusterBin.
	envChaosTest = "BATON_CLUSTER_CHAOS_TEST"
	// envClusterBin is the directory of the built binaries (make's bin/cluster).
	envClusterBin = "BATON_CLUSTER_BIN"
	// envChaosFor is how long the kills go on, as a Go duration (default 60s).
	envChaosFor = "BATON_CLUSTER_CHAOS_FOR"
	// envConsulBin is the consul binary (make's .tools/bin/consul).
	envConsulBin = "BATON_CONSUL_BIN"
)

// TestChaos runs the distributed mode as processes, every service from its own binary with
// two replicas of runs, runner, schedules and integrations and two gateways, and the chaos
// workload on it for a minute (BATON_CLUSTER_CHAOS_FOR) while a random gateway or service
// replica is killed with SIGKILL every few seconds and started again: chains, fan-outs,
// approvals, callbacks, locks, child runs, a schedule firing every second, inbound
// CloudEvents and status events to a sink. Every run must end succeeded, every script
// task must have run exactly once as the script recorded, every fire must have made one
// run, every decision, callback and lock must have been applied once, and every status
// event must have reached the sink (RunChaos's checks).
func TestChaos(t *testing.T) {
	if os.Getenv(envChaosTest) == "" {
		t.Skip("set " + envChaosTest + "=1 and " + envClusterBin + " to the built binaries to run the chaos workload on a cluster (about two minutes)")
	}
	bin, consul := os.Getenv(envClusterBin), os.Getenv(envConsulBin)
	require.NotEmpty(t, bin, envClusterBin)
	require.NotEmpty(t, consul, envConsulBin)
	kills := time.Minute
	if v := os.Getenv(envChaosFor); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, envChaosFor)
		kills = d
	}
	// Kept when the test fails, for the processes' logs to be read.
	dir, err := os.MkdirTemp("", "baton-chaos-")
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the cluster's run directory, with each process's log under logs/: %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	out := &testOut{t: t}
	ctx := context.Background()
	c, err := Start(ctx, Config{Dir: dir, Bin: bin, Consul: consul, GatewayAddr: "127.0.0.1:0", Gateways: 2, Env: ChaosEnv, Out: out})
	require.NoError(t, err)
	defer c.Stop()

	rep, err := RunChaos(ctx, c, ChaosConfig{For: kills, Dir: dir + "/executions", Out: out})
	require.NoError(t, err)
	var b strings.Builder
	rep.Print(&b)
	t.Log("\n" + b.String())
	if rep.Err() != nil {
		for _, p := range c.Procs() {
			t.Logf("%s's log, its end:\n%s", p.Name, tail(p.Log, 15))
		}
	}
	require.NoError(t, rep.Err())
	kinds := []string{"chain", "fanout", "gated", "parent", "ingest"}
	for _, k := range kinds {
		assert.Positive(t, rep.Runs[k], "runs of %s", k)
	}
	assert.NotEmpty(t, rep.Kills, "processes killed")
	assert.Positive(t, rep.Fires, "fires of the schedule")
	assert.Positive(t, rep.Decisions, "approvals decided")
	assert.Positive(t, rep.SunkRuns, "runs whose events reached the sink")
}

// testOut writes the supervisor's notes to the test's log.
type testOut struct{ t *testing.T }

func (o *testOut) Write(p []byte) (int, error) {
	o.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

package standalone_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/contract"
	"github.com/baton-flow/baton/libs/client"
	"github.com/baton-flow/baton/libs/client/worker"
)

// cuttable is a transport a test can cut, as a kill -9 of the worker's process would:
// every request after the cut fails.
type cuttable struct {
	next http.RoundTripper
	cut  atomic.Bool
}

func (c *cuttable) RoundTrip(r *http.Request) (*http.Response, error) {
	if c.cut.Load() {
		return nil, errors.New("the worker's process is gone")
	}
	return c.next.RoundTrip(r)
}

// runWorker runs w until the test ends.
func runWorker(t *testing.T, w *worker.Worker) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
}

// A worker written with the SDK serves a chain of three generic tasks: a few lines of
// code, its log lines and results reach the run, results flow from task to task.
func TestIntegrationSDKWorkerServesAChain(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error", "BATON_RATE_LIMIT": "0"})
	admin, err := client.New(b.url, client.WithToken(b.token), client.WithHTTPClient(contract.Client(t, nil)))
	require.NoError(t, err)
	ctx := t.Context()
	_, err = admin.CreateTeam(ctx, &client.TeamRequest{Name: "ship"})
	require.NoError(t, err)
	generic := func(name, dep, extra string) string {
		return `{"name":"` + name + `","type":"generic","dependencies":[{"taskRef":"` + dep + `"}],"results":[{"name":"out"}],
			"params":[{"name":"queue","value":"deploy"}` + extra + `]}`
	}
	wf := `{"name":"release","tasks":[{"name":"start","type":"start"},` + generic("build", "start", "") + `,` +
		generic("test", "build", `,{"name":"input","value":"$(tasks.build.results.out)"}`) + `,` +
		generic("ship", "test", `,{"name":"input","value":"$(tasks.test.results.out)"}`) + `,
		{"name":"end","type":"end","dependencies":[{"taskRef":"ship"}]}]}`
	require.Eventually(t, func() bool { _, err := admin.CreateWorkflowJSON(ctx, "ship", []byte(wf)); return err == nil }, 30*time.Second, 20*time.Millisecond)
	tok, err := admin.CreateToken(ctx, &client.TokenCreateRequest{Type: "team", Principal: "ship", Permissions: []string{"queue:deploy/action"}})
	require.NoError(t, err)
	c, err := client.New(b.url, client.WithToken(tok.Token), client.WithHTTPClient(contract.Client(t, nil)))
	require.NoError(t, err)

	var mu sync.Mutex
	seen := map[string]string{}
	runWorker(t, worker.New(c, "ship", "deploy").Concurrency(2).Wait(time.Second).
		Handle(func(ctx context.Context, task *worker.Task) (map[string]string, error) {
			mu.Lock()
			seen[task.Name] = task.Param("input")
			mu.Unlock()
			task.Logf("%s from %q", task.Name, task.Param("input"))
			return map[string]string{"out": task.Name + "-ok"}, nil
		}))

	run, err := admin.SubmitAndWait(ctx, "ship", "release", &client.WorkflowSubmitRequest{})
	require.NoError(t, err)
	require.True(t, run.Succeeded(), "%+v", run)
	mu.Lock()
	assert.Equal(t, map[string]string{"build": "", "test": "build-ok", "ship": "test-ok"}, seen)
	mu.Unlock()
	ship, ok := run.Task("ship")
	require.True(t, ok)
	log, err := admin.GetTaskRunLog(ctx, ship.ID)
	require.NoError(t, err)
	assert.Equal(t, "ship from \"test-ok\"\n", string(log))
}

// A worker killed mid-task (its connection to Baton gone, as with kill -9) loses the
// attempt to its lease; the attempt is retried and another worker does it, once.
func TestIntegrationSDKWorkerKilledMidTask(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error",
		"BATON_RATE_LIMIT": "0", "BATON_RUNS_RUNNER_LEASE": "2s"})
	id := b.runTask(t, "kill", `{"name":"only","type":"generic","retries":1,"dependencies":[{"taskRef":"start"}],
		"params":[{"name":"queue","value":"jobs"}]}`)
	runID := id[:strings.LastIndexByte(id, '.')]

	doomed := &cuttable{next: contract.Client(t, nil).Transport}
	dc, err := client.New(b.url, client.WithToken(b.token), client.WithHTTPClient(&http.Client{Transport: doomed}))
	require.NoError(t, err)
	started := make(chan struct{})
	var once sync.Once
	runWorker(t, worker.New(dc, "kill", "jobs").Name("doomed").Wait(time.Second).
		Handle(func(ctx context.Context, task *worker.Task) (map[string]string, error) {
			once.Do(func() { close(started) })
			doomed.cut.Store(true) // killed while it works
			<-ctx.Done()
			return nil, ctx.Err()
		}))
	within(t, started, "the doomed worker's attempt")

	var attempts []int
	var mu sync.Mutex
	c, err := client.New(b.url, client.WithToken(b.token), client.WithHTTPClient(contract.Client(t, nil)))
	require.NoError(t, err)
	runWorker(t, worker.New(c, "kill", "jobs").Name("healthy").Wait(time.Second).
		Handle(func(ctx context.Context, task *worker.Task) (map[string]string, error) {
			mu.Lock()
			attempts = append(attempts, task.Attempt)
			mu.Unlock()
			return nil, nil
		}))
	run, err := c.WaitForRun(t.Context(), "kill", runID)
	require.NoError(t, err)
	assert.True(t, run.Succeeded(), "%+v", run)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []int{2}, attempts, "the second attempt, by the healthy worker, once")
}

// A worker stopping while its claim waits gives back the attempt the claim brings: the
// next worker gets that same attempt, its first, not a retry.
func TestIntegrationSDKWorkerStoppingGivesItsClaimBack(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error", "BATON_RATE_LIMIT": "0"})
	c, err := client.New(b.url, client.WithToken(b.token), client.WithHTTPClient(contract.Client(t, nil)))
	require.NoError(t, err)
	ctx := t.Context()
	_, err = c.CreateTeam(ctx, &client.TeamRequest{Name: "calm"})
	require.NoError(t, err)
	wf := `{"name":"one","tasks":[{"name":"start","type":"start"},{"name":"only","type":"generic","dependencies":[{"taskRef":"start"}],
		"params":[{"name":"queue","value":"jobs"}]},{"name":"end","type":"end","dependencies":[{"taskRef":"only"}]}]}`
	require.Eventually(t, func() bool { _, err := c.CreateWorkflowJSON(ctx, "calm", []byte(wf)); return err == nil }, 30*time.Second, 20*time.Millisecond)

	var said strings.Builder
	var saidMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		saidMu.Lock()
		defer saidMu.Unlock()
		return said.Write(p)
	}), nil))
	claiming := make(chan struct{})
	var seen sync.Once
	sc, err := client.New(b.url, client.WithToken(b.token), client.WithHTTPClient(&http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if strings.HasSuffix(r.URL.Path, "/claim") {
			seen.Do(func() { close(claiming) })
		}
		return contract.Client(t, nil).Transport.RoundTrip(r)
	})}))
	require.NoError(t, err)
	stopping, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- worker.New(sc, "calm", "jobs").Name("stopping").Wait(30 * time.Second).Logger(logger).
			Handle(func(context.Context, *worker.Task) (map[string]string, error) {
				t.Error("a stopping worker works nothing")
				return nil, nil
			}).Run(stopping)
	}()
	within(t, claiming, "the stopping worker's first claim")
	stop() // while its first claim waits
	run, err := c.SubmitWorkflow(ctx, "calm", "one", &client.WorkflowSubmitRequest{}, true)
	require.NoError(t, err)
	require.NoError(t, within(t, done, "the stopping worker's end"))
	saidMu.Lock()
	assert.Contains(t, said.String(), "gave an attempt back")
	saidMu.Unlock()

	var attempts []int
	var mu sync.Mutex
	runWorker(t, worker.New(c, "calm", "jobs").Name("next").Wait(time.Second).
		Handle(func(_ context.Context, task *worker.Task) (map[string]string, error) {
			mu.Lock()
			attempts = append(attempts, task.Attempt)
			mu.Unlock()
			return nil, nil
		}))
	ended, err := c.WaitForRun(ctx, "calm", run.ID)
	require.NoError(t, err)
	assert.True(t, ended.Succeeded(), "%+v", ended)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []int{1}, attempts, "the attempt given back, its first")
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

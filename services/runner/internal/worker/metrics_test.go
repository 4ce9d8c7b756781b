package worker

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/runner/internal/executor"
)

// points reads the data points of family name, by their labels rendered "k=v,k=v".
func points(t *testing.T, reader *sdkmetric.ManualReader, name string) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]int64{}
	key := func(set attribute.Set) string {
		enc := attribute.DefaultEncoder()
		return set.Encoded(enc)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[key(p.Attributes)] = p.Value
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out[key(p.Attributes)] = p.Value
				}
			}
		}
	}
	return out
}

// Attempts are counted started and ended by executor and outcome, and the slots read busy
// while an attempt runs and free once it ended.
func TestWorkerMetrics(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	p := newPublisher()
	exec := &held{release: make(chan struct{})}
	w := New(Options{
		ID: "runner-1", WorkDir: t.TempDir(), Concurrency: 3, Heartbeat: 10 * time.Millisecond,
		MaxLog: 1 << 20, Runs: &runs{}, Publisher: p,
		Executor: func(events.TaskSpec) executor.Executor { return exec },
		Meter:    sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
	})
	assert.Equal(t, map[string]int64{"": 3}, points(t, reader, "baton_runner_slots"))
	assert.Equal(t, map[string]int64{"": 0}, points(t, reader, "baton_runner_slots_busy"))

	// One attempt held running until released, one that fails at once.
	holding := attempt("hold")
	holding.TaskRunID = "held"
	require.NoError(t, w.Handle(t.Context(), dispatch(t, holding)))
	require.Eventually(t, func() bool {
		return points(t, reader, "baton_runner_slots_busy")[""] == 1 &&
			points(t, reader, "baton_runner_attempts_started")["executor=process"] == 1
	}, 5*time.Second, time.Millisecond, "the held attempt takes a slot")
	failing := attempt("fail")
	failing.TaskRunID = "failing"
	require.NoError(t, w.Handle(t.Context(), dispatch(t, failing)))
	close(exec.release)
	w.Wait()

	assert.Equal(t, map[string]int64{"executor=process": 2}, points(t, reader, "baton_runner_attempts_started"))
	assert.Equal(t, map[string]int64{
		"executor=process,outcome=" + executor.StatusSucceeded: 1,
		"executor=process,outcome=" + executor.StatusFailed:    1,
	}, points(t, reader, "baton_runner_attempts_ended"))
	assert.Equal(t, map[string]int64{"": 0}, points(t, reader, "baton_runner_slots_busy"))
}

// held is an executor named process whose step "hold" runs until release is closed, and
// whose step "fail" fails at once.
type held struct{ release chan struct{} }

func (h *held) Name() string { return "process" }

func (h *held) Execute(ctx context.Context, step executor.Step, _ io.Writer) executor.Outcome {
	if step.Spec.Script == "fail" {
		return executor.Outcome{Status: executor.StatusFailed, Message: "exit 3"}
	}
	select {
	case <-h.release:
	case <-ctx.Done():
	}
	return executor.Outcome{Status: executor.StatusSucceeded}
}

func TestExecutorName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give executor.Executor
		want string
	}{
		{&executor.Process{}, "process"},
		{executor.NewDocker("/nonexistent.sock"), "docker"},
		{kubernetesExecutor(t), "kubernetes"},
		{nil, "other"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, executorName(tt.give))
	}
}

func kubernetesExecutor(t *testing.T) *executor.Kubernetes {
	t.Helper()
	k, err := executor.NewKubernetes(fake.NewClientset(), nil, executor.KubernetesOptions{Namespace: "steps", Owner: "runner-0"})
	require.NoError(t, err)
	return k
}

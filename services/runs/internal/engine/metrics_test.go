package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// meterHarness is a harness whose replicas record into a reader the test collects.
func meterHarness(t *testing.T) (*harness, *sdkmetric.ManualReader) {
	reader := sdkmetric.NewManualReader()
	h := newHarness(t)
	h.meter = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	return h, reader
}

// point is one data point of a family: its labels and its value (a histogram's count).
type point struct {
	attrs map[string]string
	value float64
}

// collect reads every data point of family name.
func collect(t *testing.T, reader *sdkmetric.ManualReader, name string) []point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	var out []point
	attrs := func(set attribute.Set) map[string]string {
		m := map[string]string{}
		for _, kv := range set.ToSlice() {
			m[string(kv.Key)] = kv.Value.Emit()
		}
		return m
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out = append(out, point{attrs(p.Attributes), float64(p.Value)})
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out = append(out, point{attrs(p.Attributes), float64(p.Value)})
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out = append(out, point{attrs(p.Attributes), float64(p.Count)})
				}
			default:
				t.Fatalf("%s: unexpected data %T", name, m.Data)
			}
		}
	}
	return out
}

// valueOf is the value of the point of family name whose labels are want, 0 when none.
func valueOf(t *testing.T, reader *sdkmetric.ManualReader, name string, want map[string]string) float64 {
	t.Helper()
	for _, p := range collect(t, reader, name) {
		if assert.ObjectsAreEqual(want, p.attrs) {
			return p.value
		}
	}
	return 0
}

// A run counts once started and once ended however many steps it takes, its tasks' ends
// are measured by type and status, and a task waiting on an approval is counted under its
// gate while it waits and no longer once decided.
func TestEngineMetricsOfARun(t *testing.T) {
	t.Parallel()
	h, reader := meterHarness(t)
	e := h.start("a")
	def := &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		script("s", "start"), task("g", tasktype.Approval, nil, "s"), task("end", tasktype.End, nil, "g")}}
	run := h.submit(e, def)
	h.finish(e, run, "s", 1, domain.Succeeded, nil)
	h.waitTask(run, "g", domain.Waiting)

	manual := map[string]string{"trigger": "manual"}
	assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_started", manual))
	assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_tasks_waiting", map[string]string{"gate": "approval"}))
	assert.Equal(t, 0.0, valueOf(t, reader, "baton_runs_tasks_waiting", map[string]string{"gate": "sleep"}))
	assert.Len(t, collect(t, reader, "baton_runs_tasks_waiting"), len(Gates), "every gate is reported, 0 when none waits")
	assert.Equal(t, 0.0, valueOf(t, reader, "baton_runs_ended", map[string]string{"trigger": "manual", "status": "succeeded"}))

	h.decide(e, h.openAction(run).ID, true)
	h.ends(run, domain.Succeeded)
	assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_started", manual), "a run starts once")
	assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_ended", map[string]string{"trigger": "manual", "status": "succeeded"}))
	assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_duration", map[string]string{"status": "succeeded"}))
	assert.Equal(t, 0.0, valueOf(t, reader, "baton_runs_tasks_waiting", map[string]string{"gate": "approval"}))
	for _, typ := range []string{tasktype.Start, tasktype.Script, tasktype.Approval, tasktype.End} {
		assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_task_duration", map[string]string{"type": typ, "status": "succeeded"}), typ)
	}
}

// A failed script task is measured failed, its run ends failed, and a sleep waits under
// its own gate.
func TestEngineMetricsOfFailuresAndSleeps(t *testing.T) {
	t.Parallel()
	h, reader := meterHarness(t)
	e := h.start("a")
	failing := h.submit(e, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		script("s", "start"), task("end", tasktype.End, nil, "s")}})
	h.finish(e, failing, "s", 1, domain.Failed, nil)
	h.ends(failing, domain.Failed)
	sleeping := h.submit(e, gate(tasktype.Sleep, map[string]any{"duration": 3_600_000}))
	h.waitTask(sleeping, "g", domain.Waiting)

	assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_task_duration", map[string]string{"type": "script", "status": "failed"}))
	assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_ended", map[string]string{"trigger": "manual", "status": "failed"}))
	assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_duration", map[string]string{"status": "failed"}))
	assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_tasks_waiting", map[string]string{"gate": "sleep"}))
	assert.Equal(t, 2.0, valueOf(t, reader, "baton_runs_started", map[string]string{"trigger": "manual"}))
}

// Team and workflow labels are added only when turned on; a label's value outside its enum
// reads "other".
func TestEngineMetricsLabels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		labels MetricLabels
		want   map[string]string
	}{
		{"off", MetricLabels{}, map[string]string{"trigger": "manual"}},
		{"team", MetricLabels{Team: true}, map[string]string{"trigger": "manual", "team": "infra"}},
		{"both", MetricLabels{Team: true, Workflow: true}, map[string]string{"trigger": "manual", "team": "infra", "workflow": "wf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reader := sdkmetric.NewManualReader()
			m := newMetrics(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), tt.labels, time.Now)
			r := &domain.Run{ID: "r1", Team: "infra", Workflow: "wf", Trigger: "manual"}
			m.started.Add(context.Background(), 1, m.runAttrs(r))
			assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_started", tt.want))
		})
	}
	assert.Equal(t, "other", bounded("made-up", domain.Triggers))
	assert.Equal(t, "schedule", bounded("schedule", domain.Triggers))
}

// A runner's claim is measured from the attempt's dispatch, once; a dead replica's run
// taken over counts one takeover repair, and is then counted waiting by its new owner only.
func TestEngineMetricsOfClaimsAndTakeovers(t *testing.T) {
	t.Parallel()
	h, reader := meterHarness(t)
	a := h.start("a")
	b := h.start("b")
	run := h.submit(a, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil), script("work", "start"),
		task("nap", tasktype.Sleep, map[string]any{"duration": 3_600_000}, "work"), task("end", tasktype.End, nil, "nap")}})
	h.dispatched(run, "work", 1)
	h.advance(40 * time.Millisecond)
	h.finish(a, run, "work", 1, domain.Succeeded, nil)
	h.waitTask(run, "nap", domain.Waiting)
	assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_dispatch_claim_latency", map[string]string{"via": "runner"}))
	assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_tasks_waiting", map[string]string{"gate": "sleep"}))
	assert.Equal(t, 0.0, valueOf(t, reader, "baton_runs_reconciler_repairs", map[string]string{"kind": "takeover"}))

	h.stop("a")
	h.advance(16 * time.Second)
	require.Eventually(t, func() bool {
		r, _ := h.stored(run)
		return r.Owner == "b"
	}, within, time.Millisecond)
	require.Eventually(t, func() bool {
		return valueOf(t, reader, "baton_runs_reconciler_repairs", map[string]string{"kind": "takeover"}) == 1
	}, within, time.Millisecond)
	// a is stopped but its count stays in this shared reader: the sum across replicas is
	// what an operator reads, and a dead replica's series vanishes with its process.
	require.Eventually(t, func() bool {
		return b.metrics.waitingOf(run) == 1
	}, within, time.Millisecond, "the new owner counts the sleep it took over")
}

// Every status event a run's steps store is unconfirmed until it is said recorded, and its
// age is that of the oldest.
func TestEngineMetricsOfUnconfirmedEvents(t *testing.T) {
	t.Parallel()
	h, reader := meterHarness(t)
	e := h.start("a")
	run := h.submit(e, gate(tasktype.Sleep, map[string]any{"duration": 3_600_000}))
	h.waitTask(run, "g", domain.Waiting)
	// The run running, start running and succeeded, g waiting: each numbered, none confirmed.
	n := valueOf(t, reader, "baton_runs_events_unconfirmed", map[string]string{})
	require.GreaterOrEqual(t, n, 3.0, "the run's events and its tasks' are unconfirmed")
	h.advance(3 * time.Second)
	assert.InDelta(t, 3.0, ageOf(t, reader), 0.001, "the oldest was stored 3s ago")

	seqs := make([]int64, int(n))
	for i := range seqs {
		seqs[i] = int64(i + 1)
	}
	e.Recorded(run, seqs)
	assert.Equal(t, 0.0, valueOf(t, reader, "baton_runs_events_unconfirmed", map[string]string{}))
	assert.Equal(t, 0.0, ageOf(t, reader), "no backlog is no age")
}

// ageOf reads baton_runs_events_unconfirmed_age.
func ageOf(t *testing.T, reader *sdkmetric.ManualReader) float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if g, ok := m.Data.(metricdata.Gauge[float64]); ok && m.Name == "baton_runs_events_unconfirmed_age" {
				require.Len(t, g.DataPoints, 1)
				return g.DataPoints[0].Value
			}
		}
	}
	t.Fatal("no baton_runs_events_unconfirmed_age")
	return 0
}

// An HTTP worker's claim of a generic task is measured under via worker.
func TestEngineMetricsOfAWorkersClaim(t *testing.T) {
	t.Parallel()
	h, reader := meterHarness(t)
	e := h.start("a")
	run := h.submit(e, gate(tasktype.Generic, map[string]any{"queue": "deploy"}))
	h.waitTask(run, "g", domain.Ready)
	require.NoError(t, e.Step(context.Background(), run, func(m *domain.Machine) error {
		if !m.Claim(m.S.G.Index["g"], 1, "worker-1") {
			return ErrNoChange
		}
		return nil
	}))
	assert.Equal(t, 1.0, valueOf(t, reader, "baton_runs_dispatch_claim_latency", map[string]string{"via": "worker"}))
	assert.Equal(t, 0.0, valueOf(t, reader, "baton_runs_dispatch_claim_latency", map[string]string{"via": "runner"}))
}

// A replica started again under its name counts the gates of the runs it finds waiting,
// which no step moves: its first sweep loads them.
func TestEngineMetricsCountWaitingRunsAfterARestart(t *testing.T) {
	t.Parallel()
	h, reader := meterHarness(t)
	e := h.start("a")
	run := h.submit(e, gate(tasktype.Sleep, map[string]any{"duration": 3_600_000}))
	h.waitTask(run, "g", domain.Waiting)
	require.Equal(t, 1.0, valueOf(t, reader, "baton_runs_tasks_waiting", map[string]string{"gate": "sleep"}))
	h.stop("a")

	again := sdkmetric.NewManualReader()
	h.meter = sdkmetric.NewMeterProvider(sdkmetric.WithReader(again))
	h.start("a")
	require.Eventually(t, func() bool {
		return valueOf(t, again, "baton_runs_tasks_waiting", map[string]string{"gate": "sleep"}) == 1
	}, within, time.Millisecond, "the sleeping run is counted again")
}

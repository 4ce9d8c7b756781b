package standalone_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/client"
	"github.com/baton-flow/baton/libs/client/worker"
)

// httpWorker runs, until b ends, an SDK worker of queue of the bench team over HTTP
// through the gateway, answering each attempt succeeded at once, concurrency attempts at a
// time, its claims waiting as long as the SDK's do by default.
func (r *rig) httpWorker(b *testing.B, queue string, concurrency int) {
	c, err := client.New(r.url, client.WithToken(r.token), client.WithHTTPClient(r.client))
	require.NoError(b, err)
	w := worker.New(c, benchTeam, queue).Concurrency(concurrency).
		Handle(func(context.Context, *worker.Task) (map[string]string, error) { return nil, nil })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		require.NoError(b, <-done)
	})
}

func genericOn(queue string) func(string) string {
	return func(string) string {
		return `"type":"generic","params":[{"name":"queue","value":"` + queue + `"}]`
	}
}

// BenchmarkEngineChain3GenericHTTP is BenchmarkEngineChain3Generic with the worker of the
// SDK (libs/client/worker) over HTTP through the gateway instead of one on Kafka: each
// attempt claimed by a waiting long poll, ended by a call.
func BenchmarkEngineChain3GenericHTTP(b *testing.B) {
	r := newRig(b, nil)
	r.httpWorker(b, "bench-http", 4)
	r.workflow(b, chain("generic3http", 3, genericOn("bench-http")), 30*time.Second)
	lats, tasks := r.chainTimes(b, "generic3http", 3, 100)
	p50, p99 := pct(lats, 50), pct(lats, 99)
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p99), "p99-ms")
	b.ReportMetric(21, "target-p50-ms")
	b.Logf("3 generic tasks between start and end, an SDK worker over HTTP answering, submit→completed, %d runs one at a time: p50=%s p99=%s (target p50 ≤ the Kafka worker's)",
		len(lats), fmtMS(p50), fmtMS(p99))
	b.Logf("  one generic task, dispatch → ended (to the ms): p50=%s p99=%s", fmtMS(pct(tasks, 50)), fmtMS(pct(tasks, 99)))
}

// BenchmarkEngineWorkerThroughput offers runs of one generic task, served by one SDK
// worker process over HTTP taking up to 64 attempts at once, at increasing rates, as
// BenchmarkEngineThroughput does: the ceiling is the generic tasks one worker process
// sustains per second.
func BenchmarkEngineWorkerThroughput(b *testing.B) {
	r := newRig(b, nil)
	r.httpWorker(b, "bench-load", 64)
	r.workflow(b, chain("generic1http", 1, genericOn("bench-load")), 30*time.Second)
	for range 10 {
		r.mustRun(b, "generic1http")
	}
	b.ResetTimer()
	best, ceiling := r.probe(b, "generic1http", []int{50, 100, 200, 300, 400, 500, 650, 800})
	b.StopTimer()
	b.ReportMetric(best, "tasks/s")
	b.ReportMetric(500, "target-tasks/s")
	b.Logf("sustained generic tasks/s of one SDK worker process over HTTP with p99 ≤ 1s: %.1f, %s (target ≥500)", best, ceiling)
}

// BenchmarkEngineWorkerFanOutThroughput is BenchmarkEngineWorkerThroughput with runs of
// ten generic tasks side by side instead of one: what a run costs beyond its tasks (its
// submit, its status events, its end) is shared by ten of them, so the ceiling is nearer
// the worker's own, the generic tasks one worker process over HTTP sustains per second.
func BenchmarkEngineWorkerFanOutThroughput(b *testing.B) {
	const width = 10
	r := newRig(b, nil)
	r.httpWorker(b, "bench-fan", 64)
	r.workflow(b, fanOutOf("generic10http", width, genericOn("bench-fan")), 30*time.Second)
	for range 5 {
		r.mustRun(b, "generic10http")
	}
	b.ResetTimer()
	runs, ceiling := r.probe(b, "generic10http", []int{10, 20, 30, 40, 50, 60, 70, 80})
	b.StopTimer()
	b.ReportMetric(width*runs, "tasks/s")
	b.ReportMetric(500, "target-tasks/s")
	b.Logf("sustained generic tasks/s of one SDK worker process over HTTP, in runs of %d side by side, with each run's p99 ≤ 1s: %.1f (%.1f runs/s), %s (target ≥500)",
		width, width*runs, runs, ceiling)
}

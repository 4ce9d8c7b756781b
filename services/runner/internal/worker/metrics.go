package worker

import (
	"context"
	"slices"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/baton-flow/baton/services/runner/internal/executor"
)

// meterName is the instrumentation scope of the runner's instruments.
const meterName = "github.com/baton-flow/baton/services/runner/worker"

// Outcomes are the values of baton_runner_attempts_ended_total's outcome label: the
// statuses an executor answers, and lost (the runs service gave the attempt to another
// runner: not reported) and detached (the runner stopped with the step still running, for
// its next start to follow).
var Outcomes = []string{
	executor.StatusSucceeded, executor.StatusFailed, executor.StatusTimedOut, executor.StatusCancelled,
	"lost", "detached",
}

// metrics are the worker's instruments.
type metrics struct {
	started metric.Int64Counter
	ended   metric.Int64Counter
}

func newMetrics(mp metric.MeterProvider, w *Worker) *metrics {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(meterName)
	m := &metrics{}
	// Errors from the SDK only say an instrument's name is malformed, which these are not.
	m.started, _ = meter.Int64Counter("baton_runner_attempts_started",
		metric.WithDescription("Attempts this runner started (or followed after a restart), by executor."),
		metric.WithUnit("{attempt}"))
	m.ended, _ = meter.Int64Counter("baton_runner_attempts_ended",
		metric.WithDescription("Attempts this runner ended, by executor and outcome."),
		metric.WithUnit("{attempt}"))
	busy, _ := meter.Int64ObservableGauge("baton_runner_slots_busy",
		metric.WithDescription("Attempt slots taken now: attempts claimed, or being claimed, and not yet ended."),
		metric.WithUnit("{slot}"))
	total, _ := meter.Int64ObservableGauge("baton_runner_slots",
		metric.WithDescription("Attempt slots of this runner (BATON_RUNNER_CONCURRENCY)."),
		metric.WithUnit("{slot}"))
	_, _ = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(busy, int64(len(w.sem)))
		o.ObserveInt64(total, int64(cap(w.sem)))
		return nil
	}, busy, total)
	return m
}

// executorName names exec in the executor label.
func executorName(exec executor.Executor) string {
	if n, ok := exec.(interface{ Name() string }); ok {
		switch name := n.Name(); name {
		case "process", "docker", "kubernetes":
			return name
		}
	}
	return "other"
}

func (m *metrics) attemptStarted(exec executor.Executor) {
	m.started.Add(context.Background(), 1, metric.WithAttributes(attribute.String("executor", executorName(exec))))
}

func (m *metrics) attemptEnded(exec executor.Executor, outcome string) {
	if !slices.Contains(Outcomes, outcome) {
		outcome = "other"
	}
	m.ended.Add(context.Background(), 1, metric.WithAttributes(
		attribute.String("executor", executorName(exec)), attribute.String("outcome", outcome)))
}

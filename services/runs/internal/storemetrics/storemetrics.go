// Package storemetrics times the runs store's operations: RunStore wraps an app.RunStore
// (SQLite or MongoDB alike) and records each call's duration in
// baton_runs_store_operation_duration_seconds, labelled by operation (op, one per method,
// Ops) and outcome (ok, conflict, not_found, error).
package storemetrics

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Ops are the values of the op label: the store's methods, in snake case.
var Ops = []string{
	"create_run", "find_run", "find_definition", "find_task_runs", "save_step", "save_tasks", "archive",
	"find_owed", "delay_owed", "clear_owed", "list_in_flight", "set_queued", "take_over", "find_descendants",
	"find_stopped", "find_task_run", "finalize_archived", "find_runs", "count_runs", "insight", "find_unfinished",
	"count_descendants", "has_live_runs", "delete_team_runs",
}

// buckets: a read or a write of one run takes from a tenth of a millisecond (SQLite, in
// the page cache) to a few milliseconds (MongoDB over the network); a query over many
// runs (insights, a team's deletion) up to seconds.
var buckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// meterName is the instrumentation scope of the store's instruments.
const meterName = "github.com/baton-flow/baton/services/runs/storemetrics"

// RunStore is an app.RunStore whose calls are timed.
type RunStore struct {
	inner    app.RunStore
	duration metric.Float64Histogram
}

var _ app.RunStore = (*RunStore)(nil)

// New wraps inner, recording into mp's meter.
func New(inner app.RunStore, mp metric.MeterProvider) *RunStore {
	s := &RunStore{inner: inner}
	// Errors from the SDK only say an instrument's name is malformed, which this is not.
	s.duration, _ = mp.Meter(meterName).Float64Histogram("baton_runs_store_operation_duration",
		metric.WithDescription("Duration of the runs store's operations, by operation and outcome."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(buckets...))
	return s
}

// observe records a call of op that started at start and answered err.
func (s *RunStore) observe(ctx context.Context, op string, start time.Time, err error) {
	s.duration.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(),
		metric.WithAttributes(attribute.String("op", op), attribute.String("outcome", outcome(err))))
}

// outcome names what a call answered: ok, a conditional write refused (conflict), nothing
// found (not_found), or another error.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, domain.ErrConflict):
		return "conflict"
	case apperr.KindOf(err) == apperr.KindNotFound:
		return "not_found"
	}
	return "error"
}

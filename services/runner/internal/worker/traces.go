package worker

import (
	"context"
	"log/slog"
	"strconv"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/runner/internal/executor"
)

const instrumentation = "github.com/baton-flow/baton/services/runner/internal/worker"

// tracer makes the attempts' spans.
func (w *Worker) tracer() trace.Tracer {
	if tp := w.opts.TracerProvider; tp != nil {
		return tp.Tracer(instrumentation)
	}
	return otel.Tracer(instrumentation)
}

// startExecute starts the span of an attempt's execution, "runner.execute": a child of the
// span of ctx (the dispatch's "process" span, which joins the trace of the run's step that
// dispatched it), and the parent of the claim's call, the heartbeats, the log's and the
// end's reports. An attempt followed after a restart starts a trace of its own.
func startExecute(ctx context.Context, tracer trace.Tracer, d events.TaskAttempt, resume bool) (context.Context, trace.Span) {
	return tracer.Start(ctx, "runner.execute", trace.WithAttributes(
		attribute.String("baton.team", d.Team),
		attribute.String("baton.workflow", d.Workflow),
		attribute.String("baton.run.id", d.RunID),
		attribute.String("baton.task.name", d.Name),
		attribute.String("baton.task.type", d.Type),
		attribute.String("baton.taskrun.id", d.TaskRunID),
		attribute.String("baton.attempt", strconv.Itoa(d.Attempt)),
		attribute.Bool("baton.resumed", resume),
	))
}

// withTrace is log with the trace and span ids of the attempt's execution, which its lines
// (logged with no context) would otherwise go without.
func withTrace(log *slog.Logger, span trace.Span) *slog.Logger {
	sc := span.SpanContext()
	if !sc.IsValid() {
		return log
	}
	return log.With("trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String())
}

// endExecute ends the span of an attempt's execution with its outcome: its status, or
// that the step was left running for the runner's next start to follow.
func endExecute(span trace.Span, out executor.Outcome) {
	switch {
	case out.Detached:
		span.SetAttributes(attribute.Bool("baton.detached", true))
	case out.Status != "":
		span.SetAttributes(attribute.String("baton.task.status", out.Status))
		if out.Status != executor.StatusSucceeded {
			span.SetStatus(codes.Error, out.Message)
		}
	}
	span.End()
}

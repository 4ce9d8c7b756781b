package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/runner/internal/executor"
)

// An attempt's execution is a span of the dispatch's trace with the attempt's
// attributes, its log lines carry its ids, and it ends with the outcome's status.
func TestExecuteSpan(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, process := tp.Tracer("test").Start(context.Background(), "process baton.task.dispatch")
	d := events.TaskAttempt{TaskRunID: "r1.1", RunID: "r1", Team: "infra", Workflow: "build", Name: "compile", Type: "script", Attempt: 2}

	_, span := startExecute(trace.ContextWithSpan(ctx, process), tp.Tracer(instrumentation), d, false)
	var buf bytes.Buffer
	withTrace(slog.New(slog.NewJSONHandler(&buf, nil)), span).Info("attempt started")
	endExecute(span, executor.Outcome{Status: executor.StatusFailed, Message: "exit code 3"})
	process.End()

	var line map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line))
	assert.Equal(t, span.SpanContext().TraceID().String(), line["trace_id"])
	assert.Equal(t, span.SpanContext().SpanID().String(), line["span_id"])

	ended := rec.Ended()
	require.Len(t, ended, 2)
	got := ended[0]
	assert.Equal(t, "runner.execute", got.Name())
	assert.Equal(t, process.SpanContext().SpanID(), got.Parent().SpanID())
	attrs := map[string]string{}
	for _, kv := range got.Attributes() {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	assert.Equal(t, map[string]string{"baton.team": "infra", "baton.workflow": "build", "baton.run.id": "r1",
		"baton.task.name": "compile", "baton.task.type": "script", "baton.taskrun.id": "r1.1", "baton.attempt": "2",
		"baton.resumed": "false", "baton.task.status": "failed"}, attrs)
	assert.Equal(t, "exit code 3", got.Status().Description)
}

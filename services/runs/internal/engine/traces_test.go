package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// recorded answers the ended spans named name that carry run's id.
func recorded(rec *tracetest.SpanRecorder, name, run string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.Name() != name {
			continue
		}
		for _, kv := range sp.Attributes() {
			if kv.Key == AttrRunID && kv.Value.AsString() == run {
				out = append(out, sp)
			}
		}
	}
	return out
}

// A run keeps the trace of its submit: its dispatch is published in it, and a later step,
// taken by another replica that loads the run from the store, is the submit's child when
// nothing traced asked for it, or the child of the span that asked, linked to the submit.
func TestRunKeepsItsSubmitsTrace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// asked says whether the step is asked for from a span of another trace.
		asked bool
	}{
		{"a step nothing traced asked for", false},
		{"a step asked for from another trace", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			h := newHarness(t)
			h.tracer = tp
			a := h.start("a")
			run := h.submit(a, &domain.Definition{Tasks: []domain.TaskDef{
				task("start", tasktype.Start, nil), script("build", "start"), task("end", tasktype.End, nil, "build")}})
			h.dispatched(run, "build", 1)

			submits := recorded(rec, "runs.submit", run)
			require.Len(t, submits, 1)
			submit := submits[0].SpanContext()
			stored, _ := h.stored(run)
			require.NotNil(t, stored)
			assert.Equal(t, fmt.Sprintf("00-%s-%s-01", submit.TraceID(), submit.SpanID()), stored.Annotations[domain.TraceAnnotation],
				"the run is stored with its submit's traceparent")
			assert.NotContains(t, domain.VisibleAnnotations(stored.Annotations), domain.TraceAnnotation)
			h.pub.mu.Lock()
			for _, m := range h.pub.msgs {
				parent := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), m.Trace))
				assert.Equal(t, submit.TraceID(), parent.TraceID(), "%s is published in the submit's trace", m.Event.ID())
			}
			h.pub.mu.Unlock()

			ctx := context.Background()
			var asker trace.SpanContext
			if tt.asked {
				var span trace.Span
				ctx, span = tp.Tracer("test").Start(ctx, "report")
				defer span.End()
				asker = span.SpanContext()
			}
			// Another replica, which holds nothing of the run, loads it to step it.
			b := h.start("b")
			require.NoError(t, b.Step(ctx, run, func(m *domain.Machine) error {
				if !m.Claim(m.S.G.Index["build"], 1, "runner-1") {
					return fmt.Errorf("attempt not claimed")
				}
				return nil
			}))
			steps := recorded(rec, "runs.step", run)
			require.Len(t, steps, 1)
			step := steps[0]
			if !tt.asked {
				assert.Equal(t, submit.TraceID(), step.SpanContext().TraceID())
				assert.Equal(t, submit.SpanID(), step.Parent().SpanID(), "the step is the submit's child")
				assert.Empty(t, step.Links())
				return
			}
			assert.Equal(t, asker.TraceID(), step.SpanContext().TraceID())
			assert.Equal(t, asker.SpanID(), step.Parent().SpanID(), "the step is the child of the span that asked")
			require.Len(t, step.Links(), 1)
			assert.Equal(t, submit.SpanID(), step.Links()[0].SpanContext.SpanID(), "and links to the submit")
		})
	}
}

// A child run a step starts is created in its parent's trace: the child's submit descends
// from the parent's.
func TestChildRunIsInItsParentsTrace(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	h := newHarness(t)
	h.tracer = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	h.defs["child"] = &domain.Definition{Name: "child", Team: "infra", Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		script("work", "start"), task("end", tasktype.End, nil, "work")}}
	e := h.start("a")
	parent := h.submit(e, parentOf("child", true))
	var child string
	require.Eventually(t, func() bool {
		_, tasks := h.stored(parent)
		child = tasks[1].Child
		return child != ""
	}, within, time.Millisecond)

	parents := recorded(rec, "runs.submit", parent)
	require.Len(t, parents, 1)
	var children []sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		children = recorded(rec, "runs.submit", child)
		return len(children) == 1
	}, within, time.Millisecond)
	assert.Equal(t, parents[0].SpanContext().TraceID(), children[0].SpanContext().TraceID())
	c, _ := h.stored(child)
	assert.Equal(t, children[0].SpanContext().TraceID(), origin(c).TraceID(), "the child keeps its own submit as its origin")
	assert.Equal(t, children[0].SpanContext().SpanID(), origin(c).SpanID())
}

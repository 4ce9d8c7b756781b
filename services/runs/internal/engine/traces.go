package engine

import (
	"context"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// A run's trace. The request that creates a run (a submit, a retry, a child's start) is
// traced; its "runs.submit" span is the run's origin, kept with the run as the W3C
// traceparent in the annotation domain.TraceAnnotation, which the API never shows. Every step of
// the run ("runs.step") is a child of the span that asked for it (a runner's report
// consumed from the broker, an API call), or, when nothing traced asked (a timer, the
// reconciler, a replica that took the run over after a restart), of the run's origin; a
// step asked for from another trace links to the origin. The messages a step owes
// (dispatches, status events) are published as children of the step, although the engine
// publishes them later from a goroutine of its own (kafkax.Message.Trace), and the child
// runs, retries and schedules a step starts are made as its children too: a child run's
// trace is its parent's.

// Span attributes of the engine's spans. Ids are attributes of spans only, never labels
// of metrics.
const (
	AttrTeam      = attribute.Key("baton.team")
	AttrWorkflow  = attribute.Key("baton.workflow")
	AttrRunID     = attribute.Key("baton.run.id")
	AttrTaskName  = attribute.Key("baton.task.name")
	AttrTaskRunID = attribute.Key("baton.taskrun.id")
)

const instrumentation = "github.com/baton-flow/baton/services/runs/internal/engine"

func runAttrs(r *domain.Run) []attribute.KeyValue {
	return []attribute.KeyValue{AttrTeam.String(r.Team), AttrWorkflow.String(r.Workflow), AttrRunID.String(r.ID)}
}

// startSubmit starts the span of a run's creation and keeps it in the run as its origin.
func startSubmit(ctx context.Context, tracer trace.Tracer, r *domain.Run) (context.Context, trace.Span) {
	ctx, span := tracer.Start(ctx, "runs.submit", trace.WithAttributes(runAttrs(r)...))
	keepTrace(ctx, r)
	return ctx, span
}

// keepTrace writes the trace context of ctx into r's domain.TraceAnnotation, or removes the
// annotation when ctx has none.
func keepTrace(ctx context.Context, r *domain.Run) {
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	tp := carrier.Get("traceparent")
	if tp == "" {
		if _, ok := r.Annotations[domain.TraceAnnotation]; ok {
			r.Annotations = domain.VisibleAnnotations(r.Annotations)
		}
		return
	}
	annotations := make(map[string]any, len(r.Annotations)+1)
	for k, v := range r.Annotations {
		annotations[k] = v
	}
	annotations[domain.TraceAnnotation] = tp
	r.Annotations = annotations
}

// origin is the span context kept in r's domain.TraceAnnotation; invalid when there is none.
func origin(r *domain.Run) trace.SpanContext {
	tp, _ := r.Annotations[domain.TraceAnnotation].(string)
	if tp == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
	return trace.SpanContextFromContext(ctx)
}

// startStep starts the span of a step of the run st holds: a child of the span of ctx, or
// of the run's origin when ctx has none.
func startStep(ctx context.Context, tracer trace.Tracer, st *domain.State) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithAttributes(runAttrs(st.Run)...)}
	if o := origin(st.Run); o.IsValid() {
		parent := trace.SpanContextFromContext(ctx)
		switch {
		case !parent.IsValid():
			ctx = trace.ContextWithRemoteSpanContext(ctx, o)
		case parent.TraceID() != o.TraceID():
			opts = append(opts, trace.WithLinks(trace.Link{Attributes: []attribute.KeyValue{attribute.String("baton.link", "run origin")}, SpanContext: o}))
		}
	}
	return tracer.Start(ctx, "runs.step", opts...)
}

// stepTasks sets on span the task runs a step changed.
func stepTasks(span trace.Span, st *domain.State, m *domain.Machine) {
	if !span.IsRecording() || len(m.Changed()) == 0 {
		return
	}
	idx := make([]int, 0, len(m.Changed()))
	for i := range m.Changed() {
		if i >= 0 && i < len(st.Tasks) {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	names := make([]string, len(idx))
	ids := make([]string, len(idx))
	for k, i := range idx {
		names[k], ids[k] = st.Tasks[i].Name, st.Tasks[i].ID
	}
	span.SetAttributes(AttrTaskName.StringSlice(names), AttrTaskRunID.StringSlice(ids))
}

// endSpan ends span, as failed when err is not nil.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// inTrace is ctx, the engine's own, within the trace of step's span: what a step sets going
// on another goroutine (a child run, a retry, a schedule) is made as the step's child, so a
// child run's trace is its parent's.
func inTrace(ctx, step context.Context) context.Context {
	sc := trace.SpanContextFromContext(step)
	if !sc.IsValid() {
		return ctx
	}
	return trace.ContextWithSpanContext(ctx, sc)
}

// traced has msgs published as children of the span of ctx.
func traced(ctx context.Context, msgs []Message) []Message {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return msgs
	}
	// The W3C trace context alone, whatever the process's propagators: what the message is
	// published under is a span, and consumers read it from the traceparent header.
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	for i := range msgs {
		if msgs[i].Trace == nil {
			msgs[i].Trace = carrier
		}
	}
	return msgs
}

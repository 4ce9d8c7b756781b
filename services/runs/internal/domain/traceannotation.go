package domain

// TraceAnnotation is the run annotation that keeps the W3C traceparent of the request that
// created the run (the engine's "runs.submit" span), so that the run's later steps, on any
// replica and after a restart, join or link to its trace. The API never shows it, and a
// value a client gives it is replaced.
const TraceAnnotation = "baton.io/traceparent"

// VisibleAnnotations is what the API shows of a run's annotations: all but
// TraceAnnotation.
func VisibleAnnotations(annotations map[string]any) map[string]any {
	if _, ok := annotations[TraceAnnotation]; !ok {
		return annotations
	}
	out := make(map[string]any, len(annotations))
	for k, v := range annotations {
		if k != TraceAnnotation {
			out[k] = v
		}
	}
	return out
}

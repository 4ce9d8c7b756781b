package standalone_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/gateway/internal/standalone"
)

// spans are the ended spans of one trace, found by their span ids.
type spans struct {
	all  []sdktrace.ReadOnlySpan
	byID map[trace.SpanID]sdktrace.ReadOnlySpan
}

func traceOf(ended []sdktrace.ReadOnlySpan, id trace.TraceID) spans {
	s := spans{byID: map[trace.SpanID]sdktrace.ReadOnlySpan{}}
	for _, sp := range ended {
		if sp.SpanContext().TraceID() == id {
			s.all = append(s.all, sp)
			s.byID[sp.SpanContext().SpanID()] = sp
		}
	}
	return s
}

func attr(sp sdktrace.ReadOnlySpan, key string) attribute.Value {
	for _, kv := range sp.Attributes() {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// find answers the spans named name whose attributes hold every one of want (a string
// slice attribute holds a value it contains).
func (s spans) find(name string, want map[string]string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, sp := range s.all {
		if sp.Name() != name {
			continue
		}
		ok := true
		for k, v := range want {
			got := attr(sp, k)
			ok = ok && (got.AsString() == v || slices.Contains(got.AsStringSlice(), v))
		}
		if ok {
			out = append(out, sp)
		}
	}
	return out
}

// under reports whether sp descends from ancestor (is its child, its child's child…)
// through recorded parents.
func (s spans) under(sp, ancestor sdktrace.ReadOnlySpan) bool {
	for cur, ok := s.byID[sp.Parent().SpanID()]; ok; cur, ok = s.byID[cur.Parent().SpanID()] {
		if cur.SpanContext().SpanID() == ancestor.SpanContext().SpanID() {
			return true
		}
	}
	return false
}

// names lists the trace's spans, for a failure's message.
func (s spans) names() string {
	var b strings.Builder
	for _, sp := range s.all {
		b.WriteString(sp.Name() + " ")
		for _, kv := range sp.Attributes() {
			if strings.HasPrefix(string(kv.Key), "baton.") || kv.Key == "messaging.message.id" {
				b.WriteString(string(kv.Key) + "=" + kv.Value.Emit() + " ")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// One submit through the gateway is one trace, to the runner's execution of the script
// task and back to the engine's step that applies the task's end: the gateway's server
// span is its root, and the runs service's server span, the submit, the dispatch's publish
// and processing, the runner's execution, its report's publish and processing and the
// step that applied it descend from it, parent by parent, with the run's and the task's
// attributes.
//
// Not parallel: the process installs its tracer provider as the global one, which the
// other tests' processes would replace.
func TestIntegrationOneTracePerSubmit(t *testing.T) {
	recorder := tracetest.NewSpanRecorder()
	b := startWith(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"},
		standalone.Options{SpanProcessor: recorder})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"traced"}`)
	require.Equal(t, http.StatusCreated, code, out)
	workflow := `{"name":"build","tasks":[{"name":"start","type":"start"},
		{"name":"compile","type":"script","params":[{"name":"script","value":"echo compiled"}],"dependencies":[{"taskRef":"start"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"compile"}]}]}`
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/traced/workflow", b.token, workflow)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)

	code, run := b.call(t, http.MethodPost, "/api/v2/team/traced/workflow/build/submit?start=true", b.token, `{"annotations":{"owner":"ci","baton.io/traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}`)
	require.Equal(t, http.StatusCreated, code, run)
	id := run["id"].(string)
	assert.Equal(t, map[string]any{"owner": "ci"}, run["annotations"], "the run's trace is not shown with its annotations, nor taken from the client")
	var done map[string]any
	require.Eventually(t, func() bool {
		_, done = b.call(t, http.MethodGet, "/api/v2/team/traced/workflowrun/"+id, b.token, "")
		return done["phase"] == "completed"
	}, 60*time.Second, 50*time.Millisecond)
	require.Equal(t, "succeeded", done["status"], done)
	assert.Equal(t, map[string]any{"owner": "ci"}, done["annotations"])
	compile := done["tasks"].([]any)[1].(map[string]any)
	require.Equal(t, "compile", compile["name"])
	taskRun := compile["id"].(string)

	// The gateway's span of the submit is the root of the trace.
	var gateway sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		for _, sp := range recorder.Ended() {
			if sp.Name() == "POST /api/v2/team/:team/workflow/:name/submit" && sp.SpanKind() == trace.SpanKindServer && !sp.Parent().IsValid() {
				gateway = sp
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "the gateway's server span of the submit among:\n%s", spans{all: recorder.Ended()}.names())

	runAttrs := map[string]string{"baton.team": "traced", "baton.workflow": "build", "baton.run.id": id}
	taskAttrs := map[string]string{"baton.run.id": id, "baton.task.name": "compile", "baton.taskrun.id": taskRun}
	// Each hop, found among the trace's spans as they end: the engine's step that applied
	// the end may end just after the run reads as completed.
	var tr spans
	hop := func(name string, attrs map[string]string, parent sdktrace.ReadOnlySpan) sdktrace.ReadOnlySpan {
		t.Helper()
		var found sdktrace.ReadOnlySpan
		require.Eventually(t, func() bool {
			tr = traceOf(recorder.Ended(), gateway.SpanContext().TraceID())
			for _, sp := range tr.find(name, attrs) {
				if tr.under(sp, parent) {
					found = sp
					return true
				}
			}
			return false
		}, 30*time.Second, 20*time.Millisecond, "no %s %v under %s in the trace:\n%s", name, attrs, parent.Name(), tr.names())
		return found
	}
	assert.Equal(t, "traced", attr(gateway, "baton.team").AsString())
	assert.Equal(t, "build", attr(gateway, "baton.workflow").AsString())
	server := hop("POST /api/v2/team/:team/workflow/:name/submit", nil, gateway)
	assert.Equal(t, trace.SpanKindServer, server.SpanKind())
	assert.NotEqual(t, gateway.SpanContext().SpanID(), server.SpanContext().SpanID(), "the runs service's own server span")
	submit := hop("runs.submit", runAttrs, server)
	send := hop("send baton.task.dispatch", map[string]string{"messaging.destination.name": "baton.task.dispatch"}, submit)
	process := hop("process baton.task.dispatch", nil, send)
	execute := hop("runner.execute", taskAttrs, process)
	assert.Equal(t, "succeeded", attr(execute, "baton.task.status").AsString())
	ended := taskRun + "/1/ended"
	report := hop("send baton.task.updates", map[string]string{"messaging.message.id": ended}, execute)
	applied := hop("process baton.task.updates", map[string]string{"messaging.message.id": ended}, report)
	step := hop("runs.step", map[string]string{"baton.run.id": id, "baton.task.name": "compile", "baton.taskrun.id": taskRun}, applied)
	assert.Equal(t, "build", attr(step, "baton.workflow").AsString())
	// The end of the run, dispatched by that step, is in the trace too.
	hop("send baton.run.events", nil, step)
}

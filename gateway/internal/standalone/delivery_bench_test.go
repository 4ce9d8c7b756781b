package standalone_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
)

// The outgoing events' speed (the integrations issue): how long after a status change
// its CloudEvent reaches a sink of settings on this machine. Same rig and conventions as
// engine_bench_test.go. A delivery's latency is its receipt by the sink (a local HTTP
// server that reads it with the CloudEvents SDK) minus the event's `time`, which the runs
// service stamps when it makes the change; both clocks are this process's. It spans the
// runs service's publish, the broker, the integrations consumer recording the event in
// its database, and the deliverer reading and posting it.

// benchSink keeps the latency of each status event it receives, by run.
type benchSink struct {
	srv *httptest.Server
	bad atomic.Int64

	mu   sync.Mutex
	got  []delivered
	done map[string]bool
}

type delivered struct {
	run, typ string
	lat      time.Duration
}

func newBenchSink(b *testing.B) *benchSink {
	b.Helper()
	s := &benchSink{done: map[string]bool{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		e, err := cehttp.NewEventFromHTTPRequest(r)
		if err != nil {
			s.bad.Add(1)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		// Subjects are /workflowrun/<run>/...
		parts := strings.SplitN(e.Subject(), "/", 4)
		if len(parts) < 3 {
			s.bad.Add(1)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.got = append(s.got, delivered{run: parts[2], typ: e.Type(), lat: at.Sub(e.Time())})
		// A run's completion is its last event: a sink gets a run's events in order.
		if e.Type() == events.TypeStatusWorkflowRun && strings.HasSuffix(e.ID(), "/completed") {
			s.done[parts[2]] = true
		}
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(s.srv.Close)
	return s
}

// arrived reports whether every one of runs has had its last event.
func (s *benchSink) arrived(runs []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range runs {
		if !s.done[r] {
			return false
		}
	}
	return true
}

// runsBut answers the runs the sink heard of that are not in skip.
func (s *benchSink) runsBut(skip []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for _, x := range s.got {
		out[x.run] = true
	}
	for _, r := range skip {
		delete(out, r)
	}
	var runs []string
	for r := range out {
		runs = append(runs, r)
	}
	return runs
}

// samples answers the latencies of runs' events, in all and by type.
func (s *benchSink) samples(runs []string) ([]time.Duration, map[string][]time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	of := map[string]bool{}
	for _, r := range runs {
		of[r] = true
	}
	var all []time.Duration
	byType := map[string][]time.Duration{}
	for _, x := range s.got {
		if of[x.run] {
			all = append(all, x.lat)
			byType[x.typ] = append(byType[x.typ], x.lat)
		}
	}
	return all, byType
}

// sinks sets the event sinks of settings.
func (r *rig) sinks(b *testing.B, urls string) {
	b.Helper()
	code, raw, err := r.do(context.Background(), http.MethodPut, "/api/v2/settings",
		fmt.Sprintf(`[{"key":"events","config":[{"key":"sinks","value":%q}]}]`, urls))
	require.NoError(b, err)
	require.Equal(b, http.StatusOK, code, truncate(raw))
}

// BenchmarkEngineDelivery measures status change → delivered to a local sink, for every
// status event of 3-task runs: first of start → script `true` → end, one run at a time
// (the run's and its task runs' changes, 7 events a run), then of start → setwfproperty →
// end offered at rate runs a second for window, open loop (engine_bench_test.go).
func BenchmarkEngineDelivery(b *testing.B) {
	const runs, rate, window = 100, 20, 10 * time.Second
	r := newRig(b, nil)
	sink := newBenchSink(b)
	r.sinks(b, sink.srv.URL+"/events")
	r.workflow(b, chain("deliver3", 1, scriptTask), 30*time.Second)
	r.workflow(b, chain("inline3", 1, inlineTask), 30*time.Second)
	// Settings reach the integrations service within its cache's life: run until the sink
	// hears of a run, then some more.
	var warm []string
	require.True(b, assertEventually(30*time.Second, 200*time.Millisecond, func() bool {
		_, v := r.mustRun(b, "deliver3")
		warm = append(warm, v.ID)
		return assertEventually(time.Second, 5*time.Millisecond, func() bool { return sink.arrived([]string{v.ID}) })
	}), "no status event reached the sink")
	for range 5 {
		_, v := r.mustRun(b, "deliver3")
		warm = append(warm, v.ID)
	}
	settle := func(ids []string) bool {
		return assertEventually(time.Minute, 5*time.Millisecond, func() bool { return sink.arrived(ids) })
	}

	b.ResetTimer()
	var ids []string
	for range runs {
		_, v := r.mustRun(b, "deliver3")
		ids = append(ids, v.ID)
	}
	drained := settle(ids)
	b.StopTimer()
	lats, byType := sink.samples(ids)
	p50, p99 := pct(lats, 50), pct(lats, 99)
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p99), "p99-ms")
	b.ReportMetric(20, "target-p50-ms")
	b.Logf("status change → delivered to a local sink, %d runs one at a time (3 tasks, a script), %d events: p50=%s p99=%s max=%s (target p50 ≤20ms); all in=%t, %d unreadable",
		runs, len(lats), fmtMS(p50), fmtMS(p99), fmtMS(pct(lats, 100)), drained, sink.bad.Load())
	for _, typ := range []string{events.TypeStatusWorkflowRun, events.TypeStatusTaskRun} {
		b.Logf("  %s: %d events, p50=%s p99=%s", typ, len(byType[typ]), fmtMS(pct(byType[typ], 50)), fmtMS(pct(byType[typ], 99)))
	}
	b.Logf("  %s", trend(lats))

	b.StartTimer()
	res := r.openLoop(rate, window, "inline3")
	b.StopTimer()
	// The open loop's runs are the sink's runs not seen before it.
	seen := append(warm, ids...)
	var loaded []string
	drained = assertEventually(time.Minute, 5*time.Millisecond, func() bool {
		loaded = sink.runsBut(seen)
		return len(loaded) >= res.sent-res.errs
	}) && settle(loaded)
	lats, _ = sink.samples(loaded)
	b.ReportMetric(ms(pct(lats, 50)), "loaded-p50-ms")
	b.ReportMetric(ms(pct(lats, 99)), "loaded-p99-ms")
	b.Logf("under load, inline 3-task runs, %d runs/s offered for %s (%d sent, %.1f/s completed, %d errors%s): %d runs' %d events delivered, p50=%s p99=%s max=%s; all in=%t",
		rate, window, res.sent, res.rate, res.errs, res.firstErr, len(loaded), len(lats), fmtMS(pct(lats, 50)), fmtMS(pct(lats, 99)), fmtMS(pct(lats, 100)), drained)
}

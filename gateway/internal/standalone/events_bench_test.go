package standalone_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The events' speed table (the integrations issue): an event accepted → its run created,
// and CloudEvents accepted per second, each starting a run, deduplication on. Same rig and
// conventions as engine_bench_test.go: one standalone process per benchmark, a fixed
// workload, run with -benchtime 1x. Every event is a structured-mode CloudEvent with a
// new id (so each is looked up among the delivery records, starts a run and is
// recorded), sent through the gateway to the integrations service, which submits its run
// to the runs service; the event's answer is its run, created (201) and, for this
// start → end workflow, already completed. With BATON_BENCH_PROFILE_DIR set, the measured
// part is CPU-profiled (see gates_bench_test.go).

// eventWorkflow is the bench team's workflow the events start: start → end, its event
// trigger on with a condition on the event's type, as a real one would have.
const eventWorkflow = "on-push"

func newEventRig(b *testing.B) *rig {
	b.Helper()
	r := newRig(b, nil)
	r.workflow(b, fmt.Sprintf(`{"name":%q,"triggers":{"event":{"enabled":true,"conditions":[{"field":"$.type","operation":"equals","value":"com.example.push"}]}},
		"tasks":[{"name":"start","type":"start"},{"name":"end","type":"end","dependencies":[{"taskRef":"start"}]}]}`, eventWorkflow), 30*time.Second)
	return r
}

// sendEvent sends one structured-mode event of id and answers how long its run took to
// be created (request → 201).
func (r *rig) sendEvent(ctx context.Context, id string) (time.Duration, error) {
	body := fmt.Sprintf(`{"specversion":"1.0","id":%q,"source":"https://ci.example.com/bench","type":"com.example.push",
		"subject":"%s/%s/main","datacontenttype":"application/json","data":{"branch":"main","commit":"%s","files":["a.go","b.go"]}}`,
		id, benchTeam, eventWorkflow, id)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/api/v2/event", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/cloudevents+json")
	req.Header.Set("Authorization", "Bearer "+r.token)
	t0 := time.Now()
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, err
	}
	raw, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	lat := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusCreated {
		return 0, fmt.Errorf("event %s: %d %s", id, resp.StatusCode, truncate(raw))
	}
	return lat, nil
}

// BenchmarkEngineEventLatency sends events one at a time, each a new id: accepted → run
// created (the 201 answer, which carries the run). An API submit of the same workflow
// (start=true) is sent after each, so what the event path adds to a submit (a hop through
// the integrations service, its record and trigger) shows apart from the machine's load.
func BenchmarkEngineEventLatency(b *testing.B) {
	const events = 300
	r := newEventRig(b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for i := range 20 {
		_, err := r.sendEvent(ctx, fmt.Sprint("warm-", i))
		require.NoError(b, err)
	}
	stop := profile(b, "event-latency")
	b.ResetTimer()
	lats := make([]time.Duration, 0, events)
	var submits []time.Duration
	for i := range events {
		lat, err := r.sendEvent(ctx, fmt.Sprint("e-", i))
		require.NoError(b, err)
		lats = append(lats, lat)
		t0 := time.Now()
		_, err = r.submit(ctx, eventWorkflow, true)
		require.NoError(b, err)
		submits = append(submits, time.Since(t0))
	}
	b.StopTimer()
	stop()
	p50, p99 := pct(lats, 50), pct(lats, 99)
	b.ReportMetric(ms(pct(submits, 50)), "api-submit-p50-ms")
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p99), "p99-ms")
	b.ReportMetric(10, "target-p50-ms")
	b.ReportMetric(50, "target-p99-ms")
	b.Logf("event accepted → run created, %d events one at a time: p50=%s p99=%s max=%s (target ≤10ms/≤50ms)",
		events, fmtMS(p50), fmtMS(p99), fmtMS(pct(lats, 100)))
	b.Logf("  %s; an API submit of the same workflow between them: p50=%s p99=%s", trend(lats), fmtMS(pct(submits, 50)), fmtMS(pct(submits, 99)))
}

// BenchmarkEngineEventThroughput offers events at increasing rates for eventWindow each,
// open loop (an event is sent when due, whether or not earlier ones were answered, and
// its latency counts from then), each a new id. A rate is sustained when every event
// started its run (201), answers kept up (≥ 90% of the offered rate) and the p99 of
// event → run created stayed ≤ 500 ms; the best answered rate of a sustained step is
// reported. The records and runs of earlier steps stay. Then, to tell what the event path
// costs from what the machine allows, eventClients clients send events back to back
// (closed loop) for eventWindow, and then as many send API submits of the same workflow.
func BenchmarkEngineEventThroughput(b *testing.B) {
	const window, eventClients = 5 * time.Second, 16
	rates := []int{10, 25, 50, 100, 200, 400, 700, 1000, 1250}
	r := newEventRig(b)
	ctx := context.Background()
	for i := range 50 {
		_, err := r.sendEvent(ctx, fmt.Sprint("warm-", i))
		require.NoError(b, err)
	}
	stop := profile(b, "event-throughput")
	b.ResetTimer()
	best, bestP99 := 0.0, time.Duration(0)
	var seq atomic.Int64
	for _, rate := range rates {
		res := r.eventLoop(rate, window, &seq)
		ok := res.errs == 0 && res.p99 <= 500*time.Millisecond && res.rate >= 0.9*float64(rate)
		b.Logf("offered %d events/s for %s: answered 201 %.1f/s, p50=%s p99=%s, %d errors; sustained=%t%s",
			rate, window, res.rate, fmtMS(res.p50), fmtMS(res.p99), res.errs, ok, res.firstErr)
		if !ok {
			break
		}
		if res.rate > best {
			best, bestP99 = res.rate, res.p99
		}
	}
	events := r.saturate(eventClients, window, func() error { _, err := r.sendEvent(ctx, fmt.Sprint("c-", seq.Add(1))); return err })
	submits := r.saturate(eventClients, window, func() error { _, err := r.submit(ctx, eventWorkflow, true); return err })
	b.StopTimer()
	stop()
	b.ReportMetric(best, "events/s")
	b.ReportMetric(1000, "target-events/s")
	b.ReportMetric(events, "closed-loop-events/s")
	b.ReportMetric(submits, "closed-loop-api-submits/s")
	b.Logf("sustained CloudEvents/s, each starting a run, dedup on, with p99 ≤ 500ms: %.1f (p99 %s) (target ≥1,000)", best, fmtMS(bestP99))
	b.Logf("  %d clients back to back for %s: %.1f events/s answered 201; API submits of the same workflow: %.1f/s", eventClients, window, events, submits)
}

// saturate has clients call send back to back for window and answers how many calls a
// second succeeded.
func (r *rig) saturate(clients int, window time.Duration, send func() error) float64 {
	var (
		wg sync.WaitGroup
		ok atomic.Int64
	)
	begin := time.Now()
	for range clients {
		wg.Go(func() {
			for time.Since(begin) < window {
				if send() == nil {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return float64(ok.Load()) / time.Since(begin).Seconds()
}

// eventLoop sends events at rate a second for window and waits for every answer; the
// latency of each is from when it was due.
func (r *rig) eventLoop(rate int, window time.Duration, seq *atomic.Int64) loadResult {
	return openLoopOf(rate, window, func(ctx context.Context, due time.Time) (time.Duration, error) {
		_, err := r.sendEvent(ctx, fmt.Sprint("t-", seq.Add(1)))
		return time.Since(due), err
	})
}

package standalone_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/sync/errgroup"

	"github.com/baton-flow/baton/gateway/internal/standalone"
)

// discardSpans is an exporter that drops what it is given: the cost measured is making,
// recording and batching every span, as for an OTLP exporter, without its network.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// BenchmarkEngineTelemetryCost measures what metrics and tracing cost a run: the chain of
// three inline tasks, one run at a time, in a process with OpenTelemetry off
// (OTEL_SDK_DISABLED=true) and in one with every span recorded and batched for export and
// every metric on, alternately, three times each in one sitting; the cost is the ratio of
// the medians of their p50s.
func BenchmarkEngineTelemetryCost(b *testing.B) {
	const runs, rounds = 200, 3
	p50s := map[string][]time.Duration{}
	for round := range rounds {
		for _, mode := range []string{"off", "on"} {
			b.Run(fmt.Sprintf("%s-%d", mode, round+1), func(b *testing.B) {
				vars, opts := map[string]string{}, standalone.Options{}
				if mode == "off" {
					vars["OTEL_SDK_DISABLED"] = "true"
				} else {
					opts.SpanProcessor = sdktrace.NewBatchSpanProcessor(discardSpans{})
				}
				r := newRigWith(b, vars, opts)
				r.workflow(b, chain("chain3", 3, inlineTask), 30*time.Second)
				for range 10 {
					r.mustRun(b, "chain3")
				}
				lats := make([]time.Duration, 0, runs)
				for range runs {
					lat, _ := r.mustRun(b, "chain3")
					lats = append(lats, lat)
				}
				p50s[mode] = append(p50s[mode], pct(lats, 50))
				b.ReportMetric(ms(pct(lats, 50)), "p50-ms")
			})
		}
	}
	// A benchmark that runs others reports nothing of its own: the summary is one more.
	b.Run("summary", func(b *testing.B) {
		off, on := median(p50s["off"]), median(p50s["on"])
		cost := 100 * (float64(on) - float64(off)) / float64(off)
		b.ReportMetric(cost, "cost-%")
		b.ReportMetric(5, "target-cost-%")
		b.Logf("3 inline tasks, submit→completed p50, OpenTelemetry off: %s; on (every span recorded, metrics): %s; median off %s, on %s: cost %.1f%% (target ≤5%%)",
			fmtAll(p50s["off"]), fmtAll(p50s["on"]), fmtMS(off), fmtMS(on), cost)
	})
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func fmtAll(ds []time.Duration) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmtMS(d)
	}
	return strings.Join(out, " ")
}

// BenchmarkEngineMetricsScrape stores 10,000 runs (of one inline task, 32 submitted at a
// time, each waited for), then scrapes the operators' /metrics 20 times: the time of a scrape, and the
// series it holds.
func BenchmarkEngineMetricsScrape(b *testing.B) {
	const stored, clients = 10_000, 32
	r := newRig(b, nil)
	r.workflow(b, chain("one", 1, inlineTask), 30*time.Second)
	begin := time.Now()
	var left atomic.Int64
	left.Store(stored)
	g, ctx := errgroup.WithContext(context.Background())
	for range clients {
		g.Go(func() error {
			for left.Add(-1) >= 0 {
				if _, _, err := r.run(ctx, "one", time.Now()); err != nil {
					return err
				}
			}
			return nil
		})
	}
	require.NoError(b, g.Wait())
	b.Logf("stored %d runs in %s", stored, time.Since(begin).Round(time.Second))

	var took []time.Duration
	series, size := 0, 0
	b.ResetTimer()
	for range 20 {
		begin := time.Now()
		resp, err := http.Get(r.admin + "/metrics")
		require.NoError(b, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(b, err)
		require.NoError(b, resp.Body.Close())
		took = append(took, time.Since(begin))
		require.Equal(b, http.StatusOK, resp.StatusCode)
		series, size = 0, len(body)
		for line := range strings.Lines(string(body)) {
			if line != "\n" && !strings.HasPrefix(line, "#") {
				series++
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(ms(pct(took, 50)), "scrape-p50-ms")
	b.ReportMetric(ms(pct(took, 100)), "scrape-max-ms")
	b.ReportMetric(50, "target-scrape-ms")
	b.ReportMetric(float64(series), "series")
	b.ReportMetric(2000, "target-series")
	b.Logf("/metrics with %d runs stored: p50=%s max=%s, %d series, %d KB (target ≤50ms, ≤2,000 series)",
		stored, fmtMS(pct(took, 50)), fmtMS(pct(took, 100)), series, size/1024)
}

package standalone_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The schedules' speed table (the schedules issue): how late a fire's run is created, how
// many schedules one scheduler keeps on time, and what schedules that are not due cost.
// Same rig and conventions as engine_bench_test.go: one standalone process per benchmark,
// a fixed workload, run with -benchtime 1x; the fires go through the real runs service.
//
// A fire's skew is its run's creationDate (stamped by the runs service, in this process,
// to the millisecond) minus the fire's planned time. Planned times are not read back: a
// schedule's first planned fire is the nextScheduleDate its creation answers, and its
// fires make one run each, in order (each fire is submitted under its own key, oldest
// first), so its k-th run, by creation, is the fire k periods after the first. A fire
// that made no run would shift the ones after it and show as a late fire, not be hidden.
//
// The runs are read once the window is over and the schedules have stopped firing (their
// workflow's schedule trigger turned off): the embedded database reads every stored run
// for each page of a query, so pages are read in a quiet process, and of many schedules
// only a sample's runs (a label's).
//
// With BATON_BENCH_PROFILE_DIR set, the measured part of each benchmark is CPU-profiled
// into that directory (see gates_bench_test.go).

const (
	// schedWorkflow is the bench team's workflow the schedules fire: start → end, which
	// ends within its first step.
	schedWorkflow = "tick"
	// schedSampled labels the schedules whose runs are read.
	schedSampled = "sampled=yes"
	// schedCreators create schedules side by side while setting up.
	schedCreators = 16
	// schedWarm is how long schedules fire before their fires are measured.
	schedWarm = 10 * time.Second
	// schedSettle is how long after a window's last planned fire its runs are read: the
	// runs of late fires are still to come before.
	schedSettle = 15 * time.Second
)

// envDuration reads a duration from the environment variable name, def when unset.
func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	require.NoError(b, err, "%s", name)
	return d
}

// envInt reads an integer from the environment variable name, def when unset.
func envInt(b *testing.B, name string, def int) int {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(b, err, "%s", name)
	return n
}

// newScheduleRig starts a rig whose bench team has workflow schedWorkflow, its schedule
// trigger on. A query of many runs may take long: the gateway waits.
func newScheduleRig(b *testing.B) *rig {
	b.Helper()
	r := newRig(b, map[string]string{"BATON_UPSTREAM_TIMEOUT": "10m"})
	r.workflow(b, tickWorkflow(true), 30*time.Second)
	return r
}

// tickWorkflow is schedWorkflow, its schedule trigger on or off.
func tickWorkflow(scheduled bool) string {
	return fmt.Sprintf(`{"name":%q,"triggers":{"schedule":{"enabled":%t}},
		"tasks":[{"name":"start","type":"start"},{"name":"end","type":"end","dependencies":[{"taskRef":"start"}]}]}`,
		schedWorkflow, scheduled)
}

// stopFiring turns schedWorkflow's schedule trigger off: its schedules fire no more.
func (r *rig) stopFiring(b *testing.B) {
	b.Helper()
	code, raw, err := r.do(context.Background(), http.MethodPut, "/api/v2/team/"+benchTeam+"/workflow", tickWorkflow(false))
	require.NoError(b, err)
	require.Equal(b, http.StatusOK, code, truncate(raw))
}

// benchSchedule is a schedule as created: its id and first planned fire, and whether its
// runs are read.
type benchSchedule struct {
	id      string
	first   time.Time
	sampled bool
}

// createSchedules creates n schedules of schedWorkflow, schedule i firing on cron(i) in
// UTC and every sample-th one labelled schedSampled, schedCreators at a time; it answers
// them in creation order, with the rate they were created at.
func (r *rig) createSchedules(b *testing.B, n, sample int, cron func(i int) string) ([]benchSchedule, float64) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	out := make([]benchSchedule, n)
	next := make(chan int)
	errs := make(chan error, schedCreators)
	var wg sync.WaitGroup
	begin := time.Now()
	for range schedCreators {
		wg.Go(func() {
			for i := range next {
				sampled := i%sample == 0
				labels := "{}"
				if sampled {
					k, v, _ := strings.Cut(schedSampled, "=")
					labels = fmt.Sprintf(`{%q:%q}`, k, v)
				}
				body := fmt.Sprintf(`{"name":"s%d","workflowRef":%q,"cronSchedule":%q,"timezone":"UTC","labels":%s}`,
					i, schedWorkflow, cron(i), labels)
				code, raw, err := r.do(ctx, http.MethodPost, "/api/v2/team/"+benchTeam+"/schedule", body)
				if err == nil && code != http.StatusCreated {
					err = fmt.Errorf("create schedule %d: %d %s", i, code, truncate(raw))
				}
				var v struct{ ID, NextScheduleDate string }
				if err == nil {
					err = json.Unmarshal(raw, &v)
				}
				var first time.Time
				if err == nil {
					first, err = time.Parse(time.RFC3339Nano, v.NextScheduleDate)
				}
				if err != nil {
					errs <- err
					cancel()
					return
				}
				out[i] = benchSchedule{id: v.ID, first: first, sampled: sampled}
			}
		})
	}
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	require.NoError(b, <-errs)
	return out, float64(n) / time.Since(begin).Seconds()
}

// firedRun is what these benchmarks read of a run a schedule fired.
type firedRun struct {
	ID           string `json:"id"`
	CreationDate string `json:"creationDate"`
	InitiatedBy  struct {
		Type, ID string
	} `json:"initiatedBy"`
}

// firedRuns reads, a page at a time, every run of the sampled schedules, and answers the
// creation times of each schedule's, in order.
func (r *rig) firedRuns(b *testing.B) map[string][]time.Time {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := map[string][]time.Time{}
	for p := 0; ; p++ {
		q := url.Values{"limit": {"1000"}, "page": {strconv.Itoa(p)}, "labels": {schedSampled}}
		code, raw, err := r.do(ctx, http.MethodGet, "/api/v2/team/"+benchTeam+"/workflowrun/query?"+q.Encode(), "")
		require.NoError(b, err)
		require.Equal(b, http.StatusOK, code, truncate(raw))
		var page struct {
			Content []firedRun `json:"content"`
		}
		require.NoError(b, json.Unmarshal(raw, &page))
		for _, v := range page.Content {
			if v.InitiatedBy.Type != "schedule" {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, v.CreationDate)
			require.NoError(b, err, "run %s", v.ID)
			out[v.InitiatedBy.ID] = append(out[v.InitiatedBy.ID], at)
		}
		if len(page.Content) < 1000 {
			break
		}
	}
	for _, ts := range out {
		slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	}
	return out
}

// skews are the fires planned within a window and how late their runs were created, in
// the order of their planned times.
type skews struct {
	lats []time.Duration
	// tenths are the p99s of the tenths of the window, by planned time.
	tenths []time.Duration
	// planned counts the fires planned within the window; missing those without a run.
	planned, missing int
}

// fireSkews matches each sampled schedule's runs to its fires, every period from its
// first, and answers the skews of the fires planned within [from, to).
func fireSkews(scheds []benchSchedule, runs map[string][]time.Time, period time.Duration, from, to time.Time) skews {
	var s skews
	type sample struct {
		at  time.Time
		lat time.Duration
	}
	var got []sample
	for _, sch := range scheds {
		if !sch.sampled {
			continue
		}
		made := runs[sch.id]
		for k := 0; ; k++ {
			at := sch.first.Add(time.Duration(k) * period)
			if !at.Before(to) {
				break
			}
			if at.Before(from) {
				continue
			}
			s.planned++
			if k >= len(made) {
				s.missing++
				continue
			}
			// Creation dates are kept to the millisecond, truncated: half of one is added.
			got = append(got, sample{at, made[k].Sub(at) + time.Millisecond/2})
		}
	}
	slices.SortStableFunc(got, func(a, b sample) int { return a.at.Compare(b.at) })
	tenths := make([][]time.Duration, 10)
	for _, g := range got {
		s.lats = append(s.lats, g.lat)
		i := int(10 * g.at.Sub(from) / to.Sub(from))
		tenths[i] = append(tenths[i], g.lat)
	}
	for _, t := range tenths {
		s.tenths = append(s.tenths, pct(t, 99))
	}
	return s
}

// tenthsText says the p99 of each tenth of the window, in ms.
func (s skews) tenthsText() string {
	var sb strings.Builder
	for i, d := range s.tenths {
		if i > 0 {
			sb.WriteString(" ")
		}
		fmt.Fprintf(&sb, "%.0f", ms(d))
	}
	return "p99 of each tenth of the window (ms): " + sb.String()
}

// measureFires lets the schedules fire for warm + window and schedSettle more, stops
// them, reads the sample's runs and answers the skews of the fires planned within the
// window.
func (r *rig) measureFires(b *testing.B, scheds []benchSchedule, period, warm, window time.Duration) skews {
	b.Helper()
	from := time.Now().Add(warm).Truncate(time.Second)
	to := from.Add(window)
	stop := profile(b, "schedules-"+strconv.Itoa(len(scheds)))
	time.Sleep(time.Until(to.Add(schedSettle)))
	stop()
	b.StopTimer()
	defer b.StartTimer()
	r.stopFiring(b)
	begin := time.Now()
	runs := r.firedRuns(b)
	n := 0
	for _, ts := range runs {
		n += len(ts)
	}
	b.Logf("reading the %d runs of %d schedules took %s", n, len(runs), time.Since(begin).Round(time.Millisecond))
	return fireSkews(scheds, runs, period, from, to)
}

// BenchmarkEngineScheduleFireSkew measures how late the runs of per-second schedules
// are created: ten schedules of start → end firing every second, for
// a window of one minute (BATON_BENCH_SCHEDULE_WINDOW=5m runs the five minutes of the
// target) after schedWarm.
func BenchmarkEngineScheduleFireSkew(b *testing.B) {
	const schedules = 10
	window := envDuration(b, "BATON_BENCH_SCHEDULE_WINDOW", time.Minute)
	r := newScheduleRig(b)
	scheds, _ := r.createSchedules(b, schedules, 1, func(int) string { return "* * * * * *" })
	b.ResetTimer()
	s := r.measureFires(b, scheds, time.Second, schedWarm, window)
	b.StopTimer()
	p50, p99 := pct(s.lats, 50), pct(s.lats, 99)
	b.ReportMetric(ms(p50), "skew-p50-ms")
	b.ReportMetric(ms(p99), "skew-p99-ms")
	b.ReportMetric(50, "target-p50-ms")
	b.ReportMetric(500, "target-p99-ms")
	b.ReportMetric(float64(s.missing), "fires-missing")
	b.Logf("fire skew (planned → run created), %d per-second schedules over %s (target: over 5m): p50=%s p99=%s max=%s (target ≤50ms/≤500ms); %d fires, %d made no run",
		schedules, window, fmtMS(p50), fmtMS(p99), fmtMS(pct(s.lats, 100)), s.planned, s.missing)
	if len(s.lats) > 0 {
		b.Logf("  %s", s.tenthsText())
	}
}

// BenchmarkEngineScheduleCapacity measures how many schedules one replica keeps on time
// when they all fire every minute: BATON_BENCH_SCHEDULES (10,000) schedules, schedule i
// firing at second i mod 60 of every minute, as many minutely schedules would if each
// were given a second of its own (10,000 all at second 0 would be 10,000 submits at
// once, a burst rather than a rate). Their fires over BATON_BENCH_SCHEDULE_WINDOW (two
// minutes) after a warm-up are on time when their p99 skew is at most a second; the fires
// of every 7th schedule are measured.
func BenchmarkEngineScheduleCapacity(b *testing.B) {
	n := envInt(b, "BATON_BENCH_SCHEDULES", 10000)
	window := envDuration(b, "BATON_BENCH_SCHEDULE_WINDOW", 2*time.Minute)
	r := newScheduleRig(b)
	begin := time.Now()
	// Every 7th schedule's runs are read: 7 and 60 have no common divisor, so the sample
	// fires at every second of the minute.
	scheds, rate := r.createSchedules(b, n, 7, func(i int) string { return fmt.Sprintf("%d * * * * *", i%60) })
	b.Logf("creating %d schedules through the gateway, %d at a time, took %s (%.0f/s)", n, schedCreators, time.Since(begin).Round(time.Millisecond), rate)
	b.ResetTimer()
	// A minute of warm-up: every schedule has fired once before its fires count.
	s := r.measureFires(b, scheds, time.Minute, time.Minute, window)
	b.StopTimer()
	p50, p99 := pct(s.lats, 50), pct(s.lats, 99)
	onTime := s.missing == 0 && p99 <= time.Second
	kept := 0
	if onTime {
		kept = n
	}
	b.ReportMetric(float64(kept), "schedules-on-time")
	b.ReportMetric(10000, "target-schedules")
	b.ReportMetric(ms(p99), "skew-p99-ms")
	b.ReportMetric(float64(s.missing), "fires-missing")
	b.Logf("%d schedules firing every minute (spread over its 60 seconds, %.0f fires/s), over %s: skew p50=%s p99=%s max=%s of a 1-in-7 sample's %d fires, %d made no run; on time (p99 ≤ 1s)=%t (target ≥10,000 schedules)",
		n, float64(n)/60, window, fmtMS(p50), fmtMS(p99), fmtMS(pct(s.lats, 100)), s.planned, s.missing, onTime)
	if len(s.lats) > 0 {
		b.Logf("  %s", s.tenthsText())
	}
}

// BenchmarkEngineScheduleIdle measures the CPU the process uses, over schedIdle in which
// nothing is due or sent, with no schedules and then with BATON_BENCH_SCHEDULES (10,000)
// schedules that fire daily twelve hours from now. Everything runs in this process (the
// services, the embedded database and broker), so the scheduler's share is the
// difference.
func BenchmarkEngineScheduleIdle(b *testing.B) {
	n := envInt(b, "BATON_BENCH_SCHEDULES", 10000)
	idle := envDuration(b, "BATON_BENCH_SCHEDULE_IDLE", time.Minute)
	r := newScheduleRig(b)
	// Due long after the benchmark: at minute i mod 60 of the hour twelve hours from now.
	hour := (time.Now().UTC().Hour() + 12) % 24
	time.Sleep(5 * time.Second) // the start's own work ends first
	b.ResetTimer()
	base := r.idleCPU(b, "schedules-idle-0", idle)
	b.StopTimer()
	begin := time.Now()
	_, rate := r.createSchedules(b, n, n, func(i int) string { return fmt.Sprintf("0 %d %d * * *", i%60, hour) })
	b.Logf("creating %d schedules took %s (%.0f/s)", n, time.Since(begin).Round(time.Millisecond), rate)
	b.StartTimer()
	// What the creations set off (events, the scheduler's polls they asked for) ends first.
	time.Sleep(5 * time.Second)
	loaded := r.idleCPU(b, "schedules-idle-"+strconv.Itoa(n), idle)
	b.StopTimer()
	b.ReportMetric(base, "idle-cpu-0-%")
	b.ReportMetric(loaded, "idle-cpu-%")
	b.ReportMetric(loaded-base, "scheduler-cpu-%")
	b.ReportMetric(2, "target-cpu-%")
	b.Logf("idle CPU over %s (of one core; %d cores): %.2f%% with no schedules, %.2f%% with %d schedules not due: the scheduler's %.2f%% (target ≤2%%)",
		idle, runtime.NumCPU(), base, loaded, n, loaded-base)
}

// idleCPU answers the CPU the process uses over idle, in % of one core.
func (r *rig) idleCPU(b *testing.B, name string, idle time.Duration) float64 {
	b.Helper()
	stop := profile(b, name)
	defer stop()
	t0, cpu0 := time.Now(), cpuTime(b)
	time.Sleep(idle)
	return 100 * float64(cpuTime(b)-cpu0) / float64(time.Since(t0))
}

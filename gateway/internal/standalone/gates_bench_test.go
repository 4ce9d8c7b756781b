package standalone_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The gates' speed table (the gates issue): how soon a decision, a callback or a lock let
// go moves a waiting run on, and what runs that only wait cost. Same rig and conventions
// as engine_bench_test.go: one standalone process per benchmark, a fixed workload, run
// with -benchtime 1x.
//
// Latencies here are request → next task started: from the instant before the request
// that ends a gate is sent to the startTime the engine stamped on the task after it, read
// back from the run (one clock: the engine runs in this process). Reading it back, every
// benchPoll, is not measured: polling adds load, not latency. Times in bodies are kept to
// the millisecond, truncated; half a millisecond is added to each, so a sample is within
// ±0.5 ms of the truth.
//
// With BATON_BENCH_PROFILE_DIR set, the measured part of each benchmark (not its set-up)
// is CPU-profiled into that directory, and the heap of the waiting runs is written there
// too; go tool pprof reads them. A -cpuprofile of the whole test binary takes precedence.

const (
	// gateWarm runs are moved on before measuring, to fill connection pools and caches.
	gateWarm = 5
	// gateSubmitters submit runs side by side while setting up.
	gateSubmitters = 16
	// gateMaxConcurrent is the bench team's concurrency limit in these benchmarks: every
	// waiting run holds a slot.
	gateMaxConcurrent = 20000
)

// gateRig is a rig whose bench team has ann@example.com, an editor in approver group
// "leads"; ann is a rig acting as her through her user token: approvals are decided by
// people, not by tokens.
type gateRig struct {
	*rig
	ann *rig
}

// newGateRig starts a rig for b and adds ann, her group and token, and a concurrency
// limit no benchmark reaches.
func newGateRig(b *testing.B, extra map[string]string) *gateRig {
	b.Helper()
	r := newRig(b, extra)
	ctx := context.Background()
	code, raw, err := r.do(ctx, http.MethodPatch, "/api/v2/team/"+benchTeam, fmt.Sprintf(`{
		"members":[{"email":"ann@example.com","role":"editor"}],
		"approverGroups":[{"name":"leads","approvers":["ann@example.com"]}],
		"quotas":{"maxConcurrentRuns":%d}}`, gateMaxConcurrent))
	require.NoError(b, err)
	require.Equal(b, http.StatusOK, code, string(raw))

	code, raw, err = r.do(ctx, http.MethodGet, "/api/v2/user/query", "")
	require.NoError(b, err)
	require.Equal(b, http.StatusOK, code, string(raw))
	var users struct {
		Content []struct{ ID, Email string } `json:"content"`
	}
	require.NoError(b, json.Unmarshal(raw, &users))
	var id string
	for _, u := range users.Content {
		if u.Email == "ann@example.com" {
			id = u.ID
		}
	}
	require.NotEmpty(b, id, "ann is not a user: %s", truncate(raw))

	code, raw, err = r.do(ctx, http.MethodPost, "/api/v2/token", `{"type":"user","name":"ann","principal":"`+id+`"}`)
	require.NoError(b, err)
	require.Equal(b, http.StatusCreated, code, string(raw))
	var tok struct{ Token string }
	require.NoError(b, json.Unmarshal(raw, &tok))
	ann := *r
	ann.token = tok.Token
	return &gateRig{rig: r, ann: &ann}
}

// Workflow definitions.

const (
	approvalGate = `"type":"approval","params":[{"name":"approverGroupRef","value":"leads"}]`
	callbackGate = `"type":"eventwait","params":[{"name":"topic","value":"go"}]`
)

// gated is start → gate (made by gate) → next (inline) → end.
func gated(name, gate string) string {
	return fmt.Sprintf(`{"name":%q,"tasks":[{"name":"start","type":"start"},
		{"name":"gate",%s,"dependencies":[{"taskRef":"start"}]},
		{"name":"next",%s,"dependencies":[{"taskRef":"gate"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"next"}]}]}`, name, gate, inlineTask("next"))
}

// locked is start → lock (acquirelock key) → hold (eventwait "go") → unlock (releaselock
// key) → end: a run holds the lock until its callback.
func locked(name, key string) string {
	return fmt.Sprintf(`{"name":%q,"tasks":[{"name":"start","type":"start"},
		{"name":"lock","type":"acquirelock","params":[{"name":"key","value":%q}],"dependencies":[{"taskRef":"start"}]},
		{"name":"hold",%s,"dependencies":[{"taskRef":"lock"}]},
		{"name":"unlock","type":"releaselock","params":[{"name":"key","value":%q}],"dependencies":[{"taskRef":"hold"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"unlock"}]}]}`, name, key, callbackGate, key)
}

// gateRun is what these benchmarks read of a run.
type gateRun struct {
	ID               string     `json:"id"`
	Status           string     `json:"status"`
	Phase            string     `json:"phase"`
	AwaitingApproval bool       `json:"awaitingApproval"`
	Tasks            []gateTask `json:"tasks"`
}

type gateTask struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	StartTime string `json:"startTime"`
	// Duration is in milliseconds.
	Duration int64 `json:"duration"`
	Attempt  int   `json:"attempt"`
}

func (v gateRun) task(name string) gateTask {
	for _, t := range v.Tasks {
		if t.Name == name {
			return t
		}
	}
	return gateTask{}
}

// actionID is the id of the action of task t (runs' domain.ActionID).
func (t gateTask) actionID() string {
	return strings.ReplaceAll(t.ID, ".", "-") + "-" + strconv.Itoa(t.Attempt)
}

// started answers when t started, to the ms plus half of one (see the top of the file).
func (t gateTask) started() (time.Time, bool) {
	s, err := time.Parse(time.RFC3339Nano, t.StartTime)
	if err != nil || t.StartTime == "" {
		return time.Time{}, false
	}
	return s.Add(time.Millisecond / 2), true
}

// readRun reads run id with its tasks.
func (r *rig) readRun(ctx context.Context, id string) (gateRun, error) {
	code, raw, err := r.do(ctx, http.MethodGet, "/api/v2/team/"+benchTeam+"/workflowrun/"+id+"?withTasks=true", "")
	if err != nil {
		return gateRun{}, err
	}
	if code != http.StatusOK {
		return gateRun{}, fmt.Errorf("get run %s: %d %s", id, code, truncate(raw))
	}
	var v gateRun
	err = json.Unmarshal(raw, &v)
	return v, err
}

// startOf polls run id every benchPoll until its task name has started, and answers when.
func (r *rig) startOf(ctx context.Context, id, name string) (time.Time, error) {
	tick := time.NewTicker(benchPoll)
	defer tick.Stop()
	for {
		v, err := r.readRun(ctx, id)
		if err != nil {
			return time.Time{}, err
		}
		if at, ok := v.task(name).started(); ok {
			return at, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("task %s of run %s not started (%s): %w", name, id, v.task(name).Status, ctx.Err())
		case <-tick.C:
		}
	}
}

// expect sends one request as r and fails unless it is answered want.
func (r *rig) expect(ctx context.Context, want int, method, path, body string) error {
	code, raw, err := r.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	if code != want {
		return fmt.Errorf("%s %s: %d %s", method, path, code, truncate(raw))
	}
	return nil
}

// submitAll submits n runs of wf with start=true, gateSubmitters at a time, and answers
// their ids and submit latencies in the order they were answered; it stops early, with
// what it has, when ctx ends or a submit fails.
func (r *rig) submitAll(ctx context.Context, wf string, n int) ([]string, []time.Duration, error) {
	var (
		mu    sync.Mutex
		ids   []string
		lats  []time.Duration
		first error
		wg    sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan struct{})
	go func() {
		defer close(next)
		for range n {
			select {
			case next <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range gateSubmitters {
		wg.Go(func() {
			for range next {
				t0 := time.Now()
				v, err := r.submit(ctx, wf, true)
				mu.Lock()
				if err != nil {
					if first == nil && ctx.Err() == nil {
						first = err
					}
					cancel()
				} else {
					ids = append(ids, v.ID)
					lats = append(lats, time.Since(t0))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return ids, lats, first
}

// park submits n runs of wf and waits until every one is ready, as read back.
func (r *rig) park(b *testing.B, wf string, n int, ready func(gateRun) bool) []gateRun {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ids, _, err := r.submitAll(ctx, wf, n)
	require.NoError(b, err)
	require.Len(b, ids, n)
	runs := make([]gateRun, n)
	for i, id := range ids {
		var last gateRun
		ok := assertEventually(benchRunDeadline, 10*time.Millisecond, func() bool {
			v, err := r.readRun(ctx, id)
			last = v
			return err == nil && ready(v)
		})
		if !ok {
			b.Fatalf("run %s of %s is not waiting as it should: %s/%s, tasks %+v", id, wf, last.Status, last.Phase, last.Tasks)
		}
		runs[i] = last
	}
	return runs
}

// gateKind is one way of ending a gate, for BenchmarkEngineGate*.
type gateKind struct {
	// what names the request in the report; metric prefixes the metrics.
	what, metric string
	// gate is the gate task of the workflow.
	gate string
	// ready tells a run whose gate waits, and can be ended at once.
	ready func(r *gateRig, v gateRun) bool
	// send ends run v's gate.
	send func(ctx context.Context, r *gateRig, v gateRun) error
}

// benchGate parks runs of a start → gate → inline → end workflow, then ends their gates
// one at a time, each once the previous run's next task has been read started.
func benchGate(b *testing.B, k gateKind) {
	const runs = 200
	r := newGateRig(b, nil)
	r.workflow(b, gated("gated", k.gate), 30*time.Second)
	parked := r.park(b, "gated", gateWarm+runs, func(v gateRun) bool { return k.ready(r, v) })
	one := func(v gateRun) (time.Duration, time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), benchRunDeadline)
		defer cancel()
		t0 := time.Now()
		require.NoError(b, k.send(ctx, r, v))
		answered := time.Since(t0)
		at, err := r.startOf(ctx, v.ID, "next")
		require.NoError(b, err)
		return at.Sub(t0), answered
	}
	for _, v := range parked[:gateWarm] {
		one(v)
	}
	stop := profile(b, "gate-"+k.metric)
	b.ResetTimer()
	var lats, answers []time.Duration
	for _, v := range parked[gateWarm:] {
		lat, answered := one(v)
		lats = append(lats, lat)
		answers = append(answers, answered)
	}
	b.StopTimer()
	stop()
	p50, p99 := pct(lats, 50), pct(lats, 99)
	b.ReportMetric(ms(p50), k.metric+"-p50-ms")
	b.ReportMetric(ms(p99), k.metric+"-p99-ms")
	b.ReportMetric(5, "target-p50-ms")
	b.ReportMetric(50, "target-p99-ms")
	b.ReportMetric(ms(pct(answers, 50)), "answer-p50-ms")
	b.Logf("%s → next task started, %d runs waiting, ended one at a time: p50=%s p99=%s max=%s (target ≤5ms/≤50ms)",
		k.what, runs, fmtMS(p50), fmtMS(p99), fmtMS(pct(lats, 100)))
	b.Logf("  the request answered p50=%s p99=%s; %s", fmtMS(pct(answers, 50)), fmtMS(pct(answers, 99)), trend(lats))
}

// BenchmarkEngineGateDecision measures approval decided → next task started: ann
// approves (PUT action) each of 200 waiting runs in turn.
func BenchmarkEngineGateDecision(b *testing.B) {
	benchGate(b, gateKind{
		what: "approval decided (PUT action)", metric: "decision", gate: approvalGate,
		// Decided only once its action is stored, which follows the run's step.
		ready: func(r *gateRig, v gateRun) bool {
			return v.AwaitingApproval && r.expect(context.Background(), http.StatusOK, http.MethodGet,
				"/api/v2/team/"+benchTeam+"/action/"+v.task("gate").actionID(), "") == nil
		},
		send: func(ctx context.Context, r *gateRig, v gateRun) error {
			return r.ann.expect(ctx, http.StatusNoContent, http.MethodPut, "/api/v2/team/"+benchTeam+"/action",
				`[{"id":"`+v.task("gate").actionID()+`","approved":true}]`)
		},
	})
}

// BenchmarkEngineGateCallback measures callback → next task started: a callback (POST
// callback, as the admin) ends the eventwait each of 200 runs waits on, in turn.
func BenchmarkEngineGateCallback(b *testing.B) {
	benchGate(b, gateKind{
		what: "callback (POST callback)", metric: "callback", gate: callbackGate,
		ready: func(_ *gateRig, v gateRun) bool { return v.task("gate").Status == "waiting" },
		send: func(ctx context.Context, r *gateRig, v gateRun) error {
			return r.expect(ctx, http.StatusNoContent, http.MethodPost, "/api/v2/callback?ref="+v.ID+"&topic=go", "")
		},
	})
}

// BenchmarkEngineLockHandOff measures lock released → the next waiter's next task
// started: 101 runs of start → acquirelock → eventwait → releaselock → end queue for one
// key, submitted one after another; the holder's callback ends its eventwait, its
// releaselock lets the lock go and the next waiter's acquirelock ends, starting its
// eventwait. Latency runs from sending the holder's callback to that eventwait's start.
func BenchmarkEngineLockHandOff(b *testing.B) {
	const waiters = 100
	r := newGateRig(b, nil)
	r.workflow(b, locked("deploy", "prod"), 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// One after another: the queue's order is the submits'.
	ids := make([]string, 0, gateWarm+waiters+1)
	for range cap(ids) {
		v, err := r.submit(ctx, "deploy", true)
		require.NoError(b, err)
		ids = append(ids, v.ID)
	}
	for i, id := range ids {
		want := "waiting"
		if i == 0 {
			want = "succeeded"
		}
		var last gateRun
		ok := assertEventually(benchRunDeadline, 10*time.Millisecond, func() bool {
			v, err := r.readRun(ctx, id)
			last = v
			return err == nil && v.task("lock").Status == want
		})
		if !ok {
			b.Fatalf("run %d (%s) should hold or wait for the lock (its acquirelock %s), tasks: %+v", i, id, want, last.Tasks)
		}
	}
	// hand lets run i's lock go and answers how long until run i+1's eventwait started,
	// until its acquirelock ended, and until the callback was answered.
	hand := func(i int) (time.Duration, time.Duration, time.Duration) {
		t0 := time.Now()
		require.NoError(b, r.expect(ctx, http.StatusNoContent, http.MethodPost, "/api/v2/callback?ref="+ids[i]+"&topic=go", ""))
		answered := time.Since(t0)
		at, err := r.startOf(ctx, ids[i+1], "hold")
		require.NoError(b, err)
		v, err := r.readRun(ctx, ids[i+1])
		require.NoError(b, err)
		lock := v.task("lock")
		if lock.Status != "succeeded" {
			b.Fatalf("run %s started its eventwait with its acquirelock %s", ids[i+1], lock.Status)
		}
		begun, _ := lock.started()
		end := begun.Add(time.Duration(lock.Duration) * time.Millisecond)
		return at.Sub(t0), end.Sub(t0), answered
	}
	for i := range gateWarm {
		hand(i)
	}
	stop := profile(b, "lock")
	b.ResetTimer()
	var lats, ends, answers []time.Duration
	for i := gateWarm; i < len(ids)-1; i++ {
		lat, end, answered := hand(i)
		lats = append(lats, lat)
		ends = append(ends, end)
		answers = append(answers, answered)
	}
	b.StopTimer()
	stop()
	p50, p99 := pct(lats, 50), pct(lats, 99)
	b.ReportMetric(ms(p50), "handoff-p50-ms")
	b.ReportMetric(ms(p99), "handoff-p99-ms")
	b.ReportMetric(5, "target-p50-ms")
	b.Logf("lock released (holder's callback) → next waiter's next task started, %d hand-offs down a queue of %d: p50=%s p99=%s max=%s (target p50 ≤5ms)",
		len(lats), waiters, fmtMS(p50), fmtMS(p99), fmtMS(pct(lats, 100)))
	b.Logf("  → the waiter's acquirelock ended p50=%s p99=%s (its start + duration, each to the ms); the callback answered p50=%s p99=%s",
		fmtMS(pct(ends, 50)), fmtMS(pct(ends, 99)), fmtMS(pct(answers, 50)), fmtMS(pct(answers, 99)))
	b.Logf("  %s", trend(lats))
}

// BenchmarkEngineWaitingRuns measures what runs waiting on approvals cost the process:
// 1,000 then 10,000 of them (start → approval → inline → end), submitted with start=true
// gateSubmitters at a time. Once a level is reached and every action stored, it reads
// the heap in use (after a GC) and the resident set, then the CPU the process uses over
// an idle window in which nothing is sent. Everything runs in this process: the
// services, embedded FerretDB on SQLite and the broker, so these are the whole
// standalone's numbers, the runs service's among them. Submitting is bounded by
// waitingBudget in all; a level not reached is measured where submitting stopped, and
// said so.
// waitingRetention is how long the embedded broker keeps messages in
// BenchmarkEngineWaitingRuns: its in-memory log holds every event of the runs submitted
// until then (5 minutes by default), which would be measured as the runs' memory. The
// consumers, in the process, have read them long before.
const waitingRetention = 10 * time.Second

func BenchmarkEngineWaitingRuns(b *testing.B) {
	const (
		idle          = 10 * time.Second
		waitingBudget = 3 * time.Minute
	)
	levels := []int{1000, 10000}
	r := newGateRig(b, map[string]string{"BATON_KAFKA_RETENTION": waitingRetention.String()})
	r.workflow(b, gated("gated", approvalGate), 30*time.Second)
	b.ResetTimer()
	base := r.settle(b, 0, idle)
	b.Logf("no runs: heap in use %.1f MiB, RSS %.1f MiB, idle CPU %.1f%% (of one core; %d cores)",
		base.heapMiB, base.rssMiB, base.cpu, runtime.NumCPU())
	deadline := time.Now().Add(waitingBudget)
	var got []footprint
	have := 0
	for _, n := range levels {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		t0 := time.Now()
		ids, lats, err := r.submitAll(ctx, "gated", n-have)
		cancel()
		have += len(ids)
		if len(ids) > 0 {
			b.Logf("%d more submits took %s (%.1f/s): p50=%s p99=%s; %s",
				len(ids), fmtMS(time.Since(t0)), float64(len(ids))/time.Since(t0).Seconds(), fmtMS(pct(lats, 50)), fmtMS(pct(lats, 99)), trend(lats))
		}
		if err != nil {
			b.Fatalf("a submit failed with %d runs submitted: %v", have, err)
		}
		if have < n {
			b.Logf("%d waiting runs NOT reached: submitting stopped after %s in all, at %d answered submits", n, waitingBudget, have)
		}
		f := r.settle(b, have, idle)
		got = append(got, f)
		level := fmt.Sprintf("%dk", n/1000)
		b.ReportMetric(f.heapMiB, "heap-"+level+"-MiB")
		b.ReportMetric(f.rssMiB, "rss-"+level+"-MiB")
		b.ReportMetric(f.cpu, "idle-cpu-"+level+"-%")
		b.ReportMetric(float64(f.runs), "runs-"+level)
		b.Logf("%d runs waiting on approvals: heap in use %.1f MiB (Go's Sys %.1f MiB), RSS %.1f MiB, idle CPU %.1f%% over %s, %d goroutines",
			f.runs, f.heapMiB, f.sysMiB, f.rssMiB, f.cpu, idle, f.goroutines)
		if have < n {
			break
		}
	}
	b.StopTimer()
	if len(got) == 2 {
		lo, hi := got[0], got[1]
		b.ReportMetric(hi.heapMiB/lo.heapMiB, "heap-ratio")
		b.ReportMetric(hi.rssMiB/lo.rssMiB, "rss-ratio")
		b.ReportMetric(hi.cpu/max(lo.cpu, 0.01), "idle-cpu-ratio")
		b.ReportMetric(1, "target-ratio")
		b.Logf("%d vs %d waiting runs: heap ×%.2f (%.2f KiB more a run), RSS ×%.2f, idle CPU ×%.2f (target: flat in the number of waiting runs, ×1)",
			hi.runs, lo.runs, hi.heapMiB/lo.heapMiB, (hi.heapMiB-lo.heapMiB)*1024/float64(hi.runs-lo.runs),
			hi.rssMiB/lo.rssMiB, hi.cpu/max(lo.cpu, 0.01))
	}
}

// footprint is what the process uses with runs waiting.
type footprint struct {
	runs                    int
	heapMiB, sysMiB, rssMiB float64
	// cpu is user + system time over the idle window's wall time, in % of one core.
	cpu        float64
	goroutines int
}

// settle waits until at least n runs are running, as many approvals are open and both
// stay so (submits given up by the client may still land), then measures the process's
// memory, and its CPU over idle.
func (r *gateRig) settle(b *testing.B, n int, idle time.Duration) footprint {
	b.Helper()
	var running, open, before int64 = 0, 0, -1
	// Both reads scan what they count: asked seldom, not to load the process measured.
	ok := assertEventually(3*time.Minute, 2*time.Second, func() bool {
		last := before
		running, open = r.waitingCounts(b)
		if running != open || running < int64(n) {
			return false
		}
		before = running
		return running == last
	})
	if !ok {
		b.Fatalf("%d runs should wait on approvals: %d runs running, %d approvals open", n, running, open)
	}
	// What the last submits set off (events relayed, the broker's consumers) ends first.
	time.Sleep(2 * time.Second)
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	f := footprint{runs: int(running), heapMiB: mib(m.HeapInuse), sysMiB: mib(m.Sys), rssMiB: rss(b), goroutines: runtime.NumGoroutine()}
	if dir := os.Getenv("BATON_BENCH_PROFILE_DIR"); dir != "" && f.runs > 0 {
		out, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%d.pprof", f.runs)))
		require.NoError(b, err)
		require.NoError(b, pprof.WriteHeapProfile(out))
		require.NoError(b, out.Close())
	}
	stop := profile(b, fmt.Sprintf("idle-%d", f.runs))
	t0, cpu0 := time.Now(), cpuTime(b)
	time.Sleep(idle)
	f.cpu = 100 * float64(cpuTime(b)-cpu0) / float64(time.Since(t0))
	stop()
	return f
}

// waitingCounts reads how many of the bench team's runs are running (a run waiting on a
// gate is) and how many approvals are open.
func (r *gateRig) waitingCounts(b *testing.B) (waiting, open int64) {
	ctx := context.Background()
	code, raw, err := r.do(ctx, http.MethodGet, "/api/v2/team/"+benchTeam+"/workflowrun/count", "")
	require.NoError(b, err)
	require.Equal(b, http.StatusOK, code, string(raw))
	var c struct {
		Status map[string]int64 `json:"status"`
	}
	require.NoError(b, json.Unmarshal(raw, &c))
	code, raw, err = r.do(ctx, http.MethodGet, "/api/v2/team/"+benchTeam+"/action/summary", "")
	require.NoError(b, err)
	require.Equal(b, http.StatusOK, code, string(raw))
	var s struct {
		Approvals int64 `json:"approvals"`
	}
	require.NoError(b, json.Unmarshal(raw, &s))
	return c.Status["running"], s.Approvals
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// rss reads the process's resident set from /proc; 0 where there is none.
func rss(b *testing.B) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			require.NoError(b, err)
			return kb / 1024
		}
	}
	return 0
}

// cpuTime reads the user and system time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &u))
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// profile starts a CPU profile named name in BATON_BENCH_PROFILE_DIR when set, and
// answers how to stop it.
func profile(b *testing.B, name string) func() {
	b.Helper()
	dir := os.Getenv("BATON_BENCH_PROFILE_DIR")
	if dir == "" {
		return func() {}
	}
	out, err := os.Create(filepath.Join(dir, name+".pprof"))
	require.NoError(b, err)
	if err := pprof.StartCPUProfile(out); err != nil {
		// -cpuprofile holds the profiler.
		b.Logf("no profile %s: %v", name, err)
		_ = out.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		require.NoError(b, out.Close())
	}
}

// BenchmarkEngineScriptBesideWaitingRuns measures runs of three script tasks, one at a
// time, first alone and then beside 2,000 runs waiting on approvals: runs that wait stay
// in flight, and what a run does as it ends (looking for its team's queued runs, among
// others) must not grow with them. Then runs offered at 25/s for 10 s beside them.
func BenchmarkEngineScriptBesideWaitingRuns(b *testing.B) {
	const waiting = 2000
	r := newGateRig(b, map[string]string{"BATON_KAFKA_RETENTION": waitingRetention.String()})
	r.workflow(b, gated("gated", approvalGate), 30*time.Second)
	r.workflow(b, chain("script3", 3, scriptTask), 30*time.Second)
	alone, _ := r.chainTimes(b, "script3", 3, 40)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	ids, _, err := r.submitAll(ctx, "gated", waiting)
	cancel()
	require.NoError(b, err, "%d of %d waiting runs submitted", len(ids), waiting)
	r.settle(b, len(ids), 2*time.Second)
	beside, _ := r.chainTimes(b, "script3", 3, 40)
	load := r.openLoop(25, 10*time.Second, "script3")
	p50, p50Alone := pct(beside, 50), pct(alone, 50)
	b.ReportMetric(ms(p50Alone), "alone-p50-ms")
	b.ReportMetric(ms(p50), "beside-p50-ms")
	b.ReportMetric(ms(p50)/ms(p50Alone), "ratio")
	b.ReportMetric(1, "target-ratio")
	b.ReportMetric(load.rate, "beside-runs/s")
	b.Logf("3 script tasks, submit→completed, 40 runs one at a time: p50=%s alone, %s beside %d runs waiting on approvals (×%.2f; target: flat, ×1); p99 %s and %s",
		fmtMS(p50Alone), fmtMS(p50), len(ids), ms(p50)/ms(p50Alone), fmtMS(pct(alone, 99)), fmtMS(pct(beside, 99)))
	b.Logf("  offered 25/s for 10s beside them: completed %.1f/s, p50=%s p99=%s, %d errors", load.rate, fmtMS(load.p50), fmtMS(load.p99), load.errs)
}

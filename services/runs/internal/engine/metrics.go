package engine

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// MetricLabels says which high-cardinality labels the engine's metrics carry besides their
// small enums: a run's team and workflow, off unless an operator turns them on
// (BATON_METRICS_LABELS).
type MetricLabels struct {
	Team, Workflow bool
}

// meterName is the instrumentation scope of the engine's instruments.
const meterName = "github.com/baton-flow/baton/services/runs/engine"

// Buckets fitted to what is measured: a run lasts from a few milliseconds (inline tasks
// only) to days (an approval left waiting); a task from a millisecond (a decision) to hours.
var (
	runBuckets = []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 7 * 24 * 3600}
	// claimBuckets: a waiting worker claims within milliseconds; a busy pool within its
	// slowest task; past the lease (30s) the attempt is sent again.
	claimBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}
	taskBuckets  = []float64{0.001, 0.005, 0.025, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600}
)

// Gates are the kinds of wait a task run may be in (status waiting), the label of
// baton_runs_tasks_waiting: a person's decision (approval), a person's form (manual), a
// callback (event), a lock (lock), a timer (sleep), or the delay before another attempt
// (retry).
var Gates = []string{"approval", "manual", "event", "lock", "sleep", "retry"}

// gateOf is the kind of wait of a waiting task run of type typ.
func gateOf(typ string) string {
	switch typ {
	case tasktype.Approval:
		return "approval"
	case tasktype.Manual:
		return "manual"
	case tasktype.EventWait:
		return "event"
	case tasktype.AcquireLock:
		return "lock"
	case tasktype.Sleep:
		return "sleep"
	}
	return "retry"
}

// taskTypes are the values of the type label; any other reads "other".
var taskTypes = []string{
	tasktype.Start, tasktype.End, tasktype.Template, tasktype.Custom, tasktype.Script, tasktype.Generic,
	tasktype.Decision, tasktype.SetWFProperty, tasktype.SetWFStatus, tasktype.Sleep, tasktype.Approval,
	tasktype.Manual, tasktype.EventWait, tasktype.AcquireLock, tasktype.ReleaseLock, tasktype.RunWorkflow,
	tasktype.RunScheduledWorkflow,
}

// bounded answers v when it is one of known, else "other": a label never takes a value
// from outside its enum.
func bounded[T ~string](v T, known []T) string {
	if slices.Contains(known, v) {
		return string(v)
	}
	return "other"
}

// metrics are the engine's instruments. Each is recorded where the change it counts is
// stored (commit, startNew), after the write succeeded: a step retried on a conflict, or
// refused, counts nothing.
type metrics struct {
	labels       MetricLabels
	started      metric.Int64Counter
	ended        metric.Int64Counter
	runDuration  metric.Float64Histogram
	taskDuration metric.Float64Histogram
	claimLatency metric.Float64Histogram
	repairs      metric.Int64Counter

	// waiting counts, per run this replica owns, its task runs waiting by gate, as of the
	// run's last step stored or load here; baton_runs_tasks_waiting reads their sum.
	mu      sync.Mutex
	waiting map[string]map[string]int64
	// unconfirmed are the status events this replica stored or sent again that integrations
	// has not said it recorded, by run and number, with when they were first seen here.
	unconfirmed map[string]map[int64]time.Time
	now         func() time.Time
}

func newMetrics(mp metric.MeterProvider, labels MetricLabels, now func() time.Time) *metrics {
	m := &metrics{labels: labels, waiting: map[string]map[string]int64{}, unconfirmed: map[string]map[int64]time.Time{}, now: now}
	meter := mp.Meter(meterName)
	// Errors from the SDK only say an instrument's name is malformed, which these are not;
	// the instruments answered with them are no-ops.
	m.started, _ = meter.Int64Counter("baton_runs_started",
		metric.WithDescription("Workflow runs started (moved from queued to running), by trigger."),
		metric.WithUnit("{run}"))
	m.ended, _ = meter.Int64Counter("baton_runs_ended",
		metric.WithDescription("Workflow runs ended, by final status and trigger."),
		metric.WithUnit("{run}"))
	m.runDuration, _ = meter.Float64Histogram("baton_runs_duration",
		metric.WithDescription("Time from a run's start (its creation, for one cancelled while queued) to its end, by final status."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(runBuckets...))
	m.taskDuration, _ = meter.Float64Histogram("baton_runs_task_duration",
		metric.WithDescription("Time from a task run's start to its end, every attempt included, by task type and final status."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(taskBuckets...))
	m.claimLatency, _ = meter.Float64Histogram("baton_runs_dispatch_claim_latency",
		metric.WithDescription("Time from an attempt's dispatch to its claim by a runner (via runner) or an HTTP worker (via worker)."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(claimBuckets...))
	m.repairs, _ = meter.Int64Counter("baton_runs_reconciler_repairs",
		metric.WithDescription("Repairs the reconciler carried out, by kind: a dead replica's run taken over, a run reloaded after a step that failed to store, a decision applied late, a child run of a stopped run cancelled."),
		metric.WithUnit("{repair}"))
	backlog, _ := meter.Int64ObservableGauge("baton_runs_events_unconfirmed",
		metric.WithDescription("Status events this replica stored (or sent again) that integrations has not yet said it recorded: the outbox's backlog."),
		metric.WithUnit("{event}"))
	age, _ := meter.Float64ObservableGauge("baton_runs_events_unconfirmed_age",
		metric.WithDescription("Age of the oldest status event in baton_runs_events_unconfirmed; 0 when there is none."),
		metric.WithUnit("s"))
	_, _ = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		n, oldest := m.backlog()
		o.ObserveInt64(backlog, n)
		o.ObserveFloat64(age, seconds(oldest, m.now(), m.now()))
		return nil
	}, backlog, age)
	_, _ = meter.Int64ObservableGauge("baton_runs_tasks_waiting",
		metric.WithDescription("Task runs waiting now in the runs this replica owns, by kind of gate."),
		metric.WithUnit("{task}"),
		metric.WithInt64Callback(m.observeWaiting))
	return m
}

// runAttrs are a run's labels: its trigger, and its team and workflow when turned on.
func (m *metrics) runAttrs(r *domain.Run, kv ...attribute.KeyValue) metric.MeasurementOption {
	kv = append(kv, attribute.String("trigger", bounded(r.Trigger, domain.Triggers)))
	if m.labels.Team {
		kv = append(kv, attribute.String("team", r.Team))
	}
	if m.labels.Workflow {
		kv = append(kv, attribute.String("workflow", r.Workflow))
	}
	return metric.WithAttributes(kv...)
}

// stored records what a step of st, stored, changed: a run that started or ended, task
// runs that ended, attempts claimed.
func (m *metrics) stored(st *domain.State, mc *domain.Machine, now time.Time) {
	ctx := context.Background()
	r := st.Run
	runChanged, _, prevPhase := mc.RunChanged()
	if runChanged && (prevPhase == domain.Queued || prevPhase == domain.Pending) &&
		(r.Phase == domain.PhaseRunning || r.Phase.Ended() && !mc.Stopped()) {
		m.started.Add(ctx, 1, m.runAttrs(r))
	}
	if runChanged && r.Phase.Ended() && !prevPhase.Ended() {
		status := attribute.String("status", bounded(r.Status, domain.Statuses))
		m.ended.Add(ctx, 1, m.runAttrs(r, status))
		begin := r.StartTime
		if mc.Stopped() && prevPhase != domain.PhaseRunning || begin.IsZero() {
			begin = r.CreationDate
		}
		m.runDuration.Record(ctx, seconds(begin, r.EndTime, now), metric.WithAttributes(status))
	}
	for i, prev := range mc.Changed() {
		t := st.Tasks[i]
		if t.Status == domain.Running && prev != domain.Running && !t.DispatchedAt.IsZero() {
			// Claimed by this step; the dispatch time is kept in memory only, so a claim on
			// a run loaded since its dispatch is not measured.
			via := "worker"
			if domain.RunsOnRunner(t.Type) {
				via = "runner"
			}
			m.claimLatency.Record(ctx, seconds(t.DispatchedAt, t.Heartbeat, now), metric.WithAttributes(attribute.String("via", via)))
		}
		if !t.Status.Terminal() || prev.Terminal() || t.StartTime.IsZero() {
			continue // not ended by this step, or never started (skipped)
		}
		m.taskDuration.Record(ctx, seconds(t.StartTime, t.EndTime, now), metric.WithAttributes(
			attribute.String("type", bounded(t.Type, taskTypes)),
			attribute.String("status", bounded(t.Status, domain.Statuses))))
	}
}

// Repairs are the kinds of baton_runs_reconciler_repairs.
const (
	repairTakeover = "takeover"
	repairReload   = "reload"
	repairDecision = "decision"
	repairOrphan   = "orphan"
)

// repaired counts a repair of kind the reconciler carried out.
func (m *metrics) repaired(kind string) {
	m.repairs.Add(context.Background(), 1, metric.WithAttributes(attribute.String("kind", kind)))
}

// holds counts the gates run st waits on now, as held here after a step or a load; owned
// says the run is this replica's: only the owner counts it.
func (m *metrics) holds(st *domain.State, owned bool) {
	if !owned || st.Run.Phase.Ended() {
		m.forget(st.Run.ID)
		return
	}
	var gates map[string]int64
	for _, t := range st.Tasks {
		if t.Status != domain.Waiting {
			continue
		}
		if gates == nil {
			gates = map[string]int64{}
		}
		gates[gateOf(t.Type)]++
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if gates == nil {
		delete(m.waiting, st.Run.ID)
		return
	}
	m.waiting[st.Run.ID] = gates
}

// maxUnconfirmedRuns bounds the runs whose unconfirmed events are followed; past it the
// count starts again from nothing (as recordedEvents forgets), rather than grow unbounded
// while integrations is away.
const maxUnconfirmedRuns = 100_000

// sent records status events of run stored or sent again at; an event already followed
// keeps the time it was first seen.
func (m *metrics) sent(run string, msgs []Message, at time.Time) {
	if len(msgs) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	seqs, ok := m.unconfirmed[run]
	for _, msg := range msgs {
		seq, numbered := events.SeqOf(msg.Event)
		if !numbered {
			continue
		}
		if !ok {
			if len(m.unconfirmed) >= maxUnconfirmedRuns {
				clear(m.unconfirmed)
			}
			seqs, ok = map[int64]time.Time{}, true
			m.unconfirmed[run] = seqs
		}
		if _, seen := seqs[seq]; !seen {
			seqs[seq] = at
		}
	}
}

// recorded drops run's events numbered seqs, said recorded.
func (m *metrics) recorded(run string, seqs []int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	owed, ok := m.unconfirmed[run]
	if !ok {
		return
	}
	for _, s := range seqs {
		delete(owed, s)
	}
	if len(owed) == 0 {
		delete(m.unconfirmed, run)
	}
}

// backlog answers how many events are unconfirmed and when the oldest was seen (zero when
// none is).
func (m *metrics) backlog() (int64, time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	var oldest time.Time
	for _, seqs := range m.unconfirmed {
		for _, at := range seqs {
			n++
			if oldest.IsZero() || at.Before(oldest) {
				oldest = at
			}
		}
	}
	return n, oldest
}

// waitingOf answers how many task runs of run wait, as counted here.
func (m *metrics) waitingOf(run string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, c := range m.waiting[run] {
		n += c
	}
	return n
}

// forget drops a run this replica no longer holds.
func (m *metrics) forget(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.waiting, id)
}

func (m *metrics) observeWaiting(_ context.Context, o metric.Int64Observer) error {
	sums := make(map[string]int64, len(Gates))
	m.mu.Lock()
	for _, gates := range m.waiting {
		for g, n := range gates {
			sums[g] += n
		}
	}
	m.mu.Unlock()
	// Every gate is reported, at 0 when nothing waits on it: a series that vanishes reads
	// as no data, not as none waiting.
	for _, g := range Gates {
		o.Observe(sums[g], metric.WithAttributes(attribute.String("gate", g)))
	}
	return nil
}

// seconds is the time from begin to end (now when end is not set), never negative.
func seconds(begin, end, now time.Time) float64 {
	if begin.IsZero() {
		return 0
	}
	if end.IsZero() {
		end = now
	}
	return max(end.Sub(begin).Seconds(), 0)
}

package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/memstore"
)

// The engine on its own: replicas sharing an in-memory store, a clock the test moves, a
// publisher that keeps what it is given, and a starter of child runs and retries that does
// what the use cases do. No database, no broker.

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// clock is the time every replica of a harness reads.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// published keeps every message the replicas publish.
type published struct {
	mu   sync.Mutex
	msgs []Message
}

func (p *published) Publish(_ context.Context, msgs []Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, msgs...)
	return nil
}

// attempts decodes the dispatches published so far.
func (p *published) attempts(t *testing.T) []events.TaskAttempt {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []events.TaskAttempt
	for _, m := range p.msgs {
		if m.Topic != events.TaskDispatch {
			continue
		}
		a, err := events.Decode[events.TaskAttempt](m.Event)
		require.NoError(t, err)
		out = append(out, a)
	}
	return out
}

// count counts the messages published with event id id.
func (p *published) count(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, m := range p.msgs {
		if m.Event.ID() == id {
			n++
		}
	}
	return n
}

// statusEvents lists the run status events published for run, as "status/phase".
func (p *published) statusEvents(run string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, m := range p.msgs {
		if m.Topic == events.RunEvents && m.Event.Type() == events.TypeStatusWorkflowRun && strings.HasPrefix(m.Event.ID(), run+"/") {
			out = append(out, strings.TrimPrefix(m.Event.ID(), run+"/"))
		}
	}
	return out
}

type harness struct {
	t     *testing.T
	store *memstore.Store
	// runs and locks, when set, stand in for store as the replicas' RunStore and
	// LockStore.
	runs  RunStore
	locks LockStore
	clock *clock
	pub   *published
	// defs are the workflows child runs start, by name.
	defs map[string]*domain.Definition
	// maxConcurrent is every team's concurrency limit; maxDepth the depth of child runs
	// the starter allows.
	maxConcurrent, maxDepth int
	// reconcile is how often the replicas started next reconcile.
	reconcile time.Duration
	// schedules, when set, makes the replicas' schedules.
	schedules Schedules
	// queues has the replicas keep queues for workers over HTTP, in store.
	queues bool
	// meter, when set, makes the replicas' instruments.
	meter metric.MeterProvider
	// tracer, when set, makes the replicas' spans.
	tracer trace.TracerProvider

	mu       sync.Mutex
	replicas map[string]*replica
	retried  []string
}

type replica struct {
	e    *Engine
	stop context.CancelFunc
	done chan struct{}
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return &harness{t: t, store: memstore.New(), clock: &clock{now: t0}, pub: &published{},
		defs: map[string]*domain.Definition{}, maxConcurrent: 100, maxDepth: 3, reconcile: 5 * time.Millisecond, replicas: map[string]*replica{}}
}

// start runs a replica named name until the test ends or stop is called.
func (h *harness) start(name string) *Engine {
	h.t.Helper()
	return h.startWith(name, h.pub, 0)
}

// startWith is start with the replica publishing to pub and sending what runs put away
// owe again after resend (0: the default).
func (h *harness) startWith(name string, pub Publisher, resend time.Duration) *Engine {
	h.t.Helper()
	e := New(Config{Replica: name, Reconcile: h.reconcile, ResendOwed: resend, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Meter: h.meter,
		TracerProvider: h.tracer},
		Deps{Runs: h.runStore(), Slots: h.store, Replicas: h.store, Heartbeats: h.store, Actions: h.store, Locks: h.lockStore(),
			Publisher: pub, Starter: h, Schedules: h.schedules, Limits: h, Queues: h.queueStore()})
	e.now = h.clock.Now
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{e: e, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		_ = e.Run(ctx)
	}()
	h.t.Cleanup(func() { h.stop(name) })
	h.mu.Lock()
	h.replicas[name] = r
	h.mu.Unlock()
	// Until it has said it is alive, the other replicas would take its runs for a dead
	// replica's.
	require.Eventually(h.t, func() bool {
		seen, err := h.store.Replicas(context.Background())
		_, ok := seen[name]
		return err == nil && ok
	}, within, time.Millisecond, "replica %s alive", name)
	return e
}

// runStore is the RunStore the replicas started next use.
func (h *harness) runStore() RunStore {
	if h.runs != nil {
		return h.runs
	}
	return h.store
}

// queueStore is the QueueStore the replicas started next use, if any.
func (h *harness) queueStore() QueueStore {
	if h.queues {
		return h.store
	}
	return nil
}

// lockStore is the LockStore the replicas started next use.
func (h *harness) lockStore() LockStore {
	if h.locks != nil {
		return h.locks
	}
	return h.store
}

// stop stops replica name and waits for it to let go.
func (h *harness) stop(name string) {
	h.mu.Lock()
	r := h.replicas[name]
	h.mu.Unlock()
	r.stop()
	<-r.done
}

// advance moves the clock on and has every replica look at its timers.
func (h *harness) advance(d time.Duration) {
	h.clock.mu.Lock()
	h.clock.now = h.clock.now.Add(d)
	h.clock.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.replicas {
		select {
		case r.e.timers.wake <- struct{}{}:
		default:
		}
	}
}

// MaxConcurrent implements Limits.
func (h *harness) MaxConcurrent(context.Context, string) (int, error) { return h.maxConcurrent, nil }

// StartChild implements RunStarter as the use cases do: the child is created by the
// engine of the replica holding its parent.
func (h *harness) StartChild(ctx context.Context, c ChildRequest) (string, error) {
	if c.Depth > h.maxDepth {
		return "", &ChildRefused{Reason: fmt.Sprintf("nested %d deep", c.Depth)}
	}
	def, ok := h.defs[c.Workflow]
	if !ok {
		return "", fmt.Errorf("no workflow %s", c.Workflow)
	}
	e := h.owner(ctx, c.ParentRun)
	// One child per task run attempt: the key says which.
	id := uuid.NewSHA1(uuid.NameSpaceOID, []byte(c.Key)).String()
	if _, err := h.store.FindRun(ctx, id); err == nil {
		return id, nil
	}
	r, tasks, err := domain.NewRun(id, clone(def), domain.SubmitRequest{Params: c.Params, Secret: c.Secret}, "task", c.By,
		h.clock.Now(), domain.Limits{MaxDuration: 60, TaskDefaultTimeout: 10})
	if err != nil {
		return "", err
	}
	r.ParentRun, r.ParentTask, r.Ancestors, r.Depth, r.SharesSlot = c.ParentRun, c.ParentTask, c.Ancestors, c.Depth, c.Wait
	return id, e.Create(ctx, Creation{Run: r, Tasks: tasks, Start: c.Wait, MaxConcurrent: h.maxConcurrent,
		Rebuild: func() (*domain.Run, []*domain.TaskRun, error) { return nil, nil, fmt.Errorf("no rebuild of a child") }},
		func(*domain.Run, []*domain.TaskRun) {})
}

// RetryRun implements RunStarter as the use cases do: the retry is created queued.
func (h *harness) RetryRun(ctx context.Context, id string) error {
	h.mu.Lock()
	h.retried = append(h.retried, id)
	h.mu.Unlock()
	old, err := h.store.FindRun(ctx, id)
	if err != nil {
		return err
	}
	if old.Definition, err = h.store.FindDefinition(ctx, old); err != nil {
		return err
	}
	oldTasks, err := h.store.FindTaskRuns(ctx, old)
	if err != nil {
		return err
	}
	r, tasks, err := domain.NewRetry(id+"-retry", old, oldTasks, domain.SubmitRequest{}, true, domain.Initiator{Type: "service"}, h.clock.Now())
	if err != nil {
		return err
	}
	return h.owner(ctx, id).Create(ctx, Creation{Run: r, Tasks: tasks, MaxConcurrent: h.maxConcurrent,
		Rebuild: func() (*domain.Run, []*domain.TaskRun, error) { return r, tasks, nil }}, func(*domain.Run, []*domain.TaskRun) {})
}

// owner is the engine of the replica holding run, else any running one.
func (h *harness) owner(ctx context.Context, run string) *Engine {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r, err := h.store.FindRun(ctx, run); err == nil {
		if rep, ok := h.replicas[r.Owner]; ok {
			return rep.e
		}
	}
	for _, rep := range h.replicas {
		return rep.e
	}
	return nil
}

func clone(def *domain.Definition) *domain.Definition {
	raw, _ := json.Marshal(def)
	var out domain.Definition
	_ = json.Unmarshal(raw, &out)
	return &out
}

// task builds a TaskDef: deps are "name", "name:success", "name:failure" or
// "name:always:pattern".
func task(name, typ string, params map[string]any, deps ...string) domain.TaskDef {
	t := domain.TaskDef{Name: name, Type: typ}
	for k, v := range params {
		raw, _ := json.Marshal(v)
		t.Params = append(t.Params, domain.TaskParam{Name: k, Value: raw})
	}
	for _, d := range deps {
		parts := strings.SplitN(d, ":", 3)
		dep := domain.Dependency{TaskRef: parts[0]}
		if len(parts) > 1 {
			dep.ExecutionCondition = parts[1]
		}
		if len(parts) > 2 {
			dep.DecisionCondition = parts[2]
		}
		t.Dependencies = append(t.Dependencies, dep)
	}
	return t
}

// script is a script task.
func script(name string, deps ...string) domain.TaskDef {
	return task(name, tasktype.Script, map[string]any{"script": "echo " + name}, deps...)
}

// submit creates a run of def on e, started when a slot is free; it answers the run's id.
func (h *harness) submit(e *Engine, def *domain.Definition) string {
	h.t.Helper()
	id := uuid.NewString()
	def.Team = "infra"
	if def.Name == "" {
		def.Name = "wf"
	}
	build := func() (*domain.Run, []*domain.TaskRun, error) {
		return domain.NewRun(id, clone(def), domain.SubmitRequest{}, "manual", domain.Initiator{Type: "user", ID: "u1"},
			h.clock.Now(), domain.Limits{MaxDuration: 60, TaskDefaultTimeout: 10})
	}
	r, tasks, err := build()
	require.NoError(h.t, err)
	require.NoError(h.t, e.Create(context.Background(), Creation{Run: r, Tasks: tasks, Rebuild: build, Start: true,
		MaxConcurrent: h.maxConcurrent}, func(*domain.Run, []*domain.TaskRun) {}))
	return id
}

// within bounds every wait of these tests.
const within = 5 * time.Second

// dispatched waits for attempt of task name of run to be sent to the runners.
func (h *harness) dispatched(run, name string, attempt int) events.TaskAttempt {
	h.t.Helper()
	var got events.TaskAttempt
	require.Eventually(h.t, func() bool {
		for _, a := range h.pub.attempts(h.t) {
			if a.RunID == run && a.Name == name && a.Attempt == attempt {
				got = a
				return true
			}
		}
		return false
	}, within, time.Millisecond, "attempt %d of %s dispatched", attempt, name)
	return got
}

// finish has runner take attempt of task name of run and end it with status, through e,
// as the use cases apply a runner's claim and report.
func (h *harness) finish(e *Engine, run, name string, attempt int, status domain.Status, results map[string]string) {
	h.t.Helper()
	h.dispatched(run, name, attempt)
	ctx := context.Background()
	require.NoError(h.t, e.Step(ctx, run, func(m *domain.Machine) error {
		i := m.S.G.Index[name]
		if !m.Claim(i, attempt, "runner-1") {
			return fmt.Errorf("attempt %d of %s not claimed", attempt, name)
		}
		return nil
	}))
	require.NoError(h.t, e.Step(ctx, run, func(m *domain.Machine) error {
		if !m.Ended(m.S.G.Index[name], attempt, status, "", results, nil) {
			return fmt.Errorf("attempt %d of %s not ended", attempt, name)
		}
		return nil
	}))
}

// callback has e take the callback on topic of run, succeeded, as a callback request
// reaching e does.
func (h *harness) callback(e *Engine, run, topic string) {
	h.t.Helper()
	require.NoError(h.t, e.Step(context.Background(), run, func(m *domain.Machine) error {
		return m.CallbackArrived(topic, domain.Succeeded, "")
	}))
}

// stored reads run and its task runs as stored.
func (h *harness) stored(run string) (*domain.Run, []*domain.TaskRun) {
	h.t.Helper()
	ctx := context.Background()
	r, err := h.store.FindRun(ctx, run)
	require.NoError(h.t, err)
	tasks, err := h.store.FindTaskRuns(ctx, r)
	require.NoError(h.t, err)
	return r, tasks
}

// statuses renders run's task runs as "name=status ...".
func (h *harness) statuses(run string) string {
	_, tasks := h.stored(run)
	b := make([]string, len(tasks))
	for i, t := range tasks {
		b[i] = t.Name + "=" + string(t.Status)
	}
	return strings.Join(b, " ")
}

// ends waits for run to end with status, put away in the archive.
func (h *harness) ends(run string, status domain.Status) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		r, err := h.store.FindRun(context.Background(), run)
		return err == nil && r.Phase.Ended() && r.Owner == ""
	}, within, time.Millisecond, "run %s put away", run)
	r, _ := h.stored(run)
	require.Equal(h.t, status, r.Status, "run %s: %s", run, r.StatusMessage)
}

// waitTask waits for task name of run to be stored with status, or one of or.
func (h *harness) waitTask(run, name string, status domain.Status, or ...domain.Status) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		_, tasks := h.stored(run)
		for _, t := range tasks {
			if t.Name == name {
				return t.Status == status || slices.Contains(or, t.Status)
			}
		}
		return false
	}, within, time.Millisecond, "task %s of %s %s %v", name, run, status, or)
}

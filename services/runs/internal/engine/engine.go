// Package engine moves runs: it holds each run in flight in memory, applies one step at a
// time to it (domain.Machine), stores what changed with conditional writes, and then
// carries out what the step owes — dispatches, status events, child runs, timers. The
// database is the truth: a replica that dies loses nothing, because another one reloads
// its runs from the active list and re-derives what they still owe.
//
// Its surface is small: Create stores a new run (started or queued), Start starts a
// queued one, Step applies a move to one, TryStep touches one in memory without waiting,
// Cancel stops one and what runs below it, and Run keeps the timers, the reconciler and
// the publisher going. What it cannot do itself it asks through ports: the stores, child
// runs and retries (RunStarter), runscheduledworkflow tasks' schedules (Schedules), a
// team's limit (Limits), the broker (Publisher).
package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Config tunes the engine.
type Config struct {
	// Replica names this replica in the active list; default a random id.
	Replica string
	// Lease is how long a runner may stay silent before its attempt is lost; default 30s.
	Lease time.Duration
	// ReplicaTimeout is how long a replica may stay silent before others take over its
	// runs; default 15s. Beat is how often a replica says it is alive; default a third
	// of ReplicaTimeout.
	ReplicaTimeout time.Duration
	Beat           time.Duration
	// Reconcile is how often queued runs and dead replicas' runs are looked at; default 2s.
	Reconcile time.Duration
	// ResendOwed is how long a run put away waits for its last status events to be said
	// recorded before it sends them again (owed.go); default 1m.
	ResendOwed time.Duration
	// PublicURL is the gateway's base URL, for the callback URLs given to tasks.
	PublicURL string
	Logger    *slog.Logger
	// Meter makes the engine's instruments (metrics.go); default the global provider.
	// MetricLabels adds a run's team and workflow to them.
	Meter        metric.MeterProvider
	MetricLabels MetricLabels
	// TracerProvider makes the spans of submits and steps (traces.go); nil means the
	// process's global one, taken when a span starts.
	TracerProvider trace.TracerProvider
}

func (c *Config) defaults() {
	if c.Replica == "" {
		c.Replica = "runs-" + uuid.NewString()[:8]
	}
	c.Lease = cmp.Or(c.Lease, domain.HeartbeatLease)
	c.ReplicaTimeout = cmp.Or(c.ReplicaTimeout, 15*time.Second)
	c.Beat = cmp.Or(c.Beat, c.ReplicaTimeout/3)
	c.Reconcile = cmp.Or(c.Reconcile, 2*time.Second)
	c.ResendOwed = cmp.Or(c.ResendOwed, time.Minute)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Meter == nil {
		c.Meter = otel.GetMeterProvider()
	}
}

// tracer makes the engine's spans.
func (e *Engine) tracer() trace.Tracer {
	if tp := e.cfg.TracerProvider; tp != nil {
		return tp.Tracer(instrumentation)
	}
	return otel.Tracer(instrumentation)
}

// Deps are what the engine works with.
type Deps struct {
	Runs       RunStore
	Slots      SlotStore
	Replicas   ReplicaStore
	Heartbeats HeartbeatReader
	Actions    ActionStore
	Locks      LockStore
	Publisher  Publisher
	Starter    RunStarter
	// Schedules makes runscheduledworkflow tasks' schedules; without it, those tasks fail.
	Schedules Schedules
	Limits    Limits
	// Sealer seals the attempts that carry secrets for the runners.
	Sealer Sealer
	// Queues keeps the attempts of generic tasks waiting for workers over HTTP; without
	// it, they go to their queue's topic only.
	Queues QueueStore
}

// Engine moves workflow runs. Its surface is small: Create a run, Start a queued one,
// apply a Step to one, Cancel one, and Run the timers and the reconciler that move them
// on their own.
type Engine struct {
	cfg      Config
	runs     RunStore
	slots    SlotStore
	replicas ReplicaStore
	beats    HeartbeatReader
	actions  ActionStore
	queues   QueueStore
	// queueWake wakes the claims waiting on a queue (queued.go).
	queueWake queueSignals
	locks     LockStore
	starter   RunStarter
	sched     Schedules
	limits    Limits
	box       Sealer
	pub       *publisher
	log       *slog.Logger
	now       func() time.Time
	metrics   *metrics

	held actors
	// parked are the runs put out of memory (park), by the versions they were left at, the
	// last of them with their state.
	parked parkedRuns
	// queueLooks has a team's entry while its queued runs are being looked at, true when
	// another look is wanted after (see kickQueued).
	queueMu    sync.Mutex
	queueLooks map[string]*bool
	// queued tells which teams may have queued runs held here: a look finds them only by
	// listing the runs in flight, which a store without a query on them reads whole.
	queued queueMarks
	timers *timers
	// lastSweep is when the reconciler last looked at every run in flight.
	lastSweep time.Time
	// recorded is what this replica heard of the recording of runs' status events;
	// lastResend is when it last looked for runs put away that owe events (owed.go).
	recorded   *recordedEvents
	lastResend time.Time
	// bg is the context of Run: work a request starts but must outlive it uses it.
	bg     context.Context
	bgOnce sync.Once
	ready  chan struct{}
	wg     sync.WaitGroup
}

// New returns an engine; Run must be running for it to move runs.
func New(cfg Config, deps Deps) *Engine {
	cfg.defaults()
	e := &Engine{
		cfg: cfg, runs: deps.Runs, slots: deps.Slots, replicas: deps.Replicas, beats: deps.Heartbeats,
		actions: deps.Actions, locks: deps.Locks, queues: deps.Queues,
		starter: deps.Starter, sched: deps.Schedules, limits: deps.Limits, box: deps.Sealer, log: cfg.Logger, now: time.Now,
		held: actors{m: map[string]*actor{}}, parked: newParkedRuns(parkedKept), queueLooks: map[string]*bool{}, ready: make(chan struct{}),
		recorded: newRecordedEvents(), metrics: newMetrics(cfg.Meter, cfg.MetricLabels, time.Now),
	}
	e.metrics.now = func() time.Time { return e.now() }
	e.pub = newPublisher(deps.Publisher, cfg.Logger)
	e.timers = newTimers()
	return e
}

// parkedKept is how many of the runs put out of memory keep their state (parkedRuns): a
// few MiB at most, whatever the number of waiting runs.
const parkedKept = 512

// forget drops a run from memory, and its timer; the caller may hold the run's own lock.
func (e *Engine) forget(id string) {
	e.held.release(id)
	e.parked.drop(id)
	e.timers.set(id, time.Time{})
	e.forgetRecorded(id)
	e.metrics.forget(id)
}

// ErrStale is what a step answers when it refused an input that a fresher view of the run
// might accept: Step reloads the run once and applies the step again.
var ErrStale = errors.New("refused on the state in memory")

// ErrNoChange ends a step without storing anything; Step answers it as it is.
var ErrNoChange = errors.New("nothing to do")

// errConflictRetries bounds the reloads of a step that keeps losing to another writer.
const errConflictRetries = 8

// Step applies fn to run id as one step, stores it and carries out what it owes. fn runs
// under the run's lock on the state as it is stored; it may be called again on a fresh
// load when another replica moved the run meanwhile, so it must decide from the state
// alone. fn answers ErrStale to have a refusal decided again on a fresh load, ErrNoChange
// to store nothing.
func (e *Engine) Step(ctx context.Context, id string, fn func(m *domain.Machine) error) (err error) {
	a := e.held.lock(id)
	defer e.held.unlock(id, a)
	// Set when a write of this step stored its task runs but not the run: what the step
	// owed is then only in the task runs, and the reload below settles it only when the run
	// is this replica's; another replica's owner is asked to, before the lock goes.
	inPart := false
	defer func() {
		if inPart {
			e.askOwner(ctx, id, a)
		}
	}()
	revalidated := false
	var span trace.Span
	defer func() { endSpan(span, err) }()
	for try := 0; ; try++ {
		if a.st == nil && !e.unpark(id, a) {
			revalidated = true
			if err := e.load(ctx, id, a); err != nil {
				return err
			}
		}
		if span == nil {
			ctx, span = startStep(ctx, e.tracer(), a.st)
		}
		m := domain.NewMachine(a.st, e.now())
		if err := fn(m); err != nil {
			if errors.Is(err, ErrStale) {
				if revalidated {
					e.putAway(id, a)
					return nil
				}
				// A refusal decided on what this replica holds in memory, which another
				// replica may have moved on: decide again on what is stored.
				a.st = nil
				continue
			}
			// Nothing was stored, but the run may have been loaded for the step: kept as a
			// stored step keeps it, or an idle run would stay in memory with no timer,
			// where the reconciler does not look (wakeSoon).
			e.putAway(id, a)
			return err
		}
		stepTasks(span, a.st, m)
		err := e.commit(ctx, id, a, m)
		inPart = inPart || errors.Is(err, errStoredInPart)
		if errors.Is(err, domain.ErrConflict) && try < errConflictRetries {
			a.st = nil
			continue
		}
		if err != nil {
			a.st = nil
			return err
		}
		e.putAway(id, a)
		return nil
	}
}

// putAway keeps a run in memory after a step only when it is this replica's and does more
// than wait. The caller holds the run's lock.
func (e *Engine) putAway(id string, a *actor) {
	if a.st != nil && a.st.Run.Owner != e.cfg.Replica {
		// Another replica's run is not kept: its copy here would only go stale. Its
		// timer is, so that what this step set going (a sleep, a retry) happens even
		// when the owner does not know of it yet.
		a.st = nil
		e.held.release(id)
	}
	e.park(id, a)
}

// load reads run id into a and, when the run is this replica's, settles whatever a
// previous holder left half done.
func (e *Engine) load(ctx context.Context, id string, a *actor) error {
	for try := 0; ; try++ {
		r, err := e.runs.FindRun(ctx, id)
		if err == nil {
			r.Definition, err = e.runs.FindDefinition(ctx, r)
		}
		if err != nil {
			e.forget(id)
			return err
		}
		tasks, err := e.runs.FindTaskRuns(ctx, r)
		if err != nil {
			return err
		}
		st, err := domain.NewState(r, tasks)
		if err != nil {
			return fmt.Errorf("load run %s: %w", id, err)
		}
		a.st = st
		_, a.idle = domain.NewMachine(st, e.now()).Wake(e.cfg.Lease)
		if r.Owner != e.cfg.Replica {
			// Ended and put away (no owner), or another replica's run, loaded to apply a
			// claim or a report: what the run still owes is its owner's to settle, and a
			// replica settling it too would only send its dispatches twice. Its status
			// events not yet said recorded go out again before this step's, so that a
			// step taken here while its owner is dead keeps them in order.
			if owed := e.unrecorded(st); len(owed) > 0 && r.Owner != "" {
				e.resend(id, owed)
			}
			return nil
		}
		if e.parked.take(id, r, tasks) {
			// Put out of memory here with everything it owed done, and unchanged since:
			// there is nothing to settle.
			return nil
		}
		// Loaded from the store (a restart, a takeover, another replica's step moved it):
		// what it owes downstream first, in order, before anything this load and later
		// steps send, since its events may not have left the replica that stored them
		// (which may have died since), or the broker may have lost them. Consumers drop
		// what they had.
		if owed := e.unrecorded(st); len(owed) > 0 {
			e.resend(id, owed)
		}
		m := domain.NewMachine(st, e.now())
		m.Repair()
		m.Recover()
		if next, _ := m.Wake(e.cfg.Lease); r.Phase == domain.PhaseRunning && !sameMilli(next, r.WakeAt) {
			// The run's next timed move is not the one its task runs hold (a step stored
			// in part, an owner asked to settle it): stored again, it is found in time.
			m.MarkRunChanged()
		}
		err = e.commit(ctx, id, a, m)
		if errors.Is(err, domain.ErrConflict) && try < errConflictRetries {
			continue
		}
		if err != nil {
			a.st = nil
			return err
		}
		if r.Phase.Ended() {
			// Completed but still listed active: what its end owes may not have happened.
			e.ended(st)
		}
		return nil
	}
}

// unpark takes up run id with the state it was parked with, when that was kept, and
// reports whether it did. Another replica may have moved the run since (a decision or a
// callback taken there, a takeover), so the state is used as a run held in memory is:
// what a step decides on it is stored by a write conditional on the versions it was
// parked at, which a move elsewhere makes refused (ErrConflict: the run is loaded again
// and the step decided anew), and a refusal decided on it (ErrStale) is decided again on
// a load. A timer's step, whose moves may write nothing, looks at the stored version
// before it starts (refresh).
func (e *Engine) unpark(id string, a *actor) bool {
	st := e.parked.takeState(id)
	if st == nil {
		return false
	}
	a.st = st
	_, a.idle = domain.NewMachine(st, e.now()).Wake(e.cfg.Lease)
	return true
}

// errStoredInPart marks a failed step whose task runs were stored, but not its run.
var errStoredInPart = errors.New("the step's task runs were stored, its run was not")

// askOwner has the owner of run id settle a step of this replica's that was stored in
// part: its task runs moved on (a sleep began, an approval opened, a task became ready)
// while its run, written over by another writer, says nothing of what that owes. A
// replica settles only its own runs on loading them (load), so the run is stored due at
// once: the owner's reconciler finds it (wakeSoon) and loads it, and that load derives
// what is owed (Recover) and its true next move. The caller holds the run's lock.
func (e *Engine) askOwner(ctx context.Context, id string, a *actor) {
	for range errConflictRetries {
		if a.st == nil {
			if err := e.load(ctx, id, a); err != nil {
				return
			}
		}
		r := a.st.Run
		if r.Owner == e.cfg.Replica || r.Owner == "" || r.Phase != domain.PhaseRunning {
			return // settled on loading, or nothing more is owed
		}
		r.WakeAt = e.now()
		err := e.runs.SaveStep(ctx, r, a.st.Tasks, nil)
		a.st = nil
		if err == nil {
			e.held.release(id)
			return
		}
		if !errors.Is(err, domain.ErrConflict) {
			if ctx.Err() == nil {
				e.log.Warn("cannot ask the owner to settle a run", "run", id, "owner", r.Owner, "error", err)
			}
			return
		}
	}
}

// owesOwner reports whether a step owes effects that only its run's owner derives again
// after a crash, with nothing timed to bring it back to them: a gate's action or lock, a
// child run, a schedule. (Dispatches come back with their lease.)
func owesOwner(eff domain.Effects) bool {
	return len(eff.Actions)+len(eff.Acquire)+len(eff.Leave)+len(eff.Release)+len(eff.StartChild)+len(eff.Schedule) > 0
}

// sameMilli reports whether a and b are the same moment as the store keeps times.
func sameMilli(a, b time.Time) bool {
	return a.Truncate(time.Millisecond).Equal(b.Truncate(time.Millisecond))
}

// commit stores a step and carries out its effects.
func (e *Engine) commit(ctx context.Context, id string, a *actor, m *domain.Machine) error {
	// Before the events and the wake: a claim on dispatch moves its task on.
	claims := e.claimOnDispatch(m)
	changed := m.Changed()
	runChanged, _, prevPhase := m.RunChanged()
	// Stored with the step, in the task runs and the run it writes: a crash after the
	// write loses none of them.
	status := e.statusEvents(a.st, m)
	if len(changed) > 0 || runChanged {
		idx := make([]int, 0, len(changed))
		versions := make([]int64, 0, len(changed))
		for i := range changed {
			idx = append(idx, i)
			versions = append(versions, a.st.Tasks[i].Version)
		}
		prevWake := a.st.Run.WakeAt
		a.st.Run.WakeAt, a.idle = domain.NewMachine(a.st, e.now()).Wake(e.cfg.Lease)
		save := e.runs.SaveStep
		if !runChanged && a.st.Run.Owner == e.cfg.Replica && !prevWake.IsZero() &&
			(a.st.Run.WakeAt.IsZero() || !a.st.Run.WakeAt.Before(prevWake)) {
			// A step of task runs alone (a claim, a beat's lease) that brings the run's next
			// timed move no sooner: the run as stored stays right, its wake at worst early,
			// which costs a look (wakeSoon) and no write now — one write less per runner task.
			save = e.runs.SaveTasks
		}
		ends := a.st.Run.Phase.Ended() && !prevPhase.Ended()
		if a.st.Run.Owner != e.cfg.Replica && a.st.Run.Owner != "" && (owesOwner(m.Effects()) || ends) {
			// This replica does what the step owes, and nothing else would come back to it
			// if this replica died first: the owner loads the run by the time it would
			// know, and loading derives again what is still owed (Recover), then stores
			// the run's true next move. A run that ends here owes its end (its slot, its
			// locks, its parent, the archive), which the owner's load carries out again.
			if check := e.now().Add(e.cfg.ReplicaTimeout); a.st.Run.WakeAt.IsZero() || check.Before(a.st.Run.WakeAt) {
				a.st.Run.WakeAt = check
			}
		}
		if err := save(ctx, a.st.Run, a.st.Tasks, idx); err != nil {
			// The store moves the versions of what it wrote (RunStore.SaveStep).
			for k, i := range idx {
				if a.st.Tasks[i].Version != versions[k] {
					// The task runs were stored, with their status events: those go out now,
					// before any later step's, as a stored step's would.
					e.metrics.sent(id, taskEvents(status), e.now())
					e.pub.enqueue(taskEvents(status), nil)
					// Their claims too: the attempts are their workers'.
					e.settleClaims(a.st, claims, true)
					return fmt.Errorf("%w: %w", errStoredInPart, err)
				}
			}
			e.settleClaims(a.st, claims, false)
			return err
		}
		e.metrics.stored(a.st, m, e.now())
		e.metrics.sent(id, status, e.now())
	}
	// Whether or not the step wrote anything: a run loaded after a restart counts its
	// gates from its first commit here.
	e.metrics.holds(a.st, a.st.Run.Owner == e.cfg.Replica)
	e.effects(ctx, id, a.st, m, status, claims)
	return nil
}

// owe records that what a stored step of run owed failed (an action or a lock not
// written): its next load settles it (domain's Recover), and the reconciler loads it soon,
// whether it is in memory or parked. It must not be called under the run's lock.
func (e *Engine) owe(run string) {
	e.parked.owe(run)
	e.held.drop(run)
	e.held.get(run)
}

// park lets go of a run of this replica's that only waits (domain's Machine.Wake): a run
// waiting on people keeps nothing in memory but its timer, a heap entry. Its next step, or
// its timer, loads it again.
func (e *Engine) park(id string, a *actor) {
	if a.st == nil || !a.idle || a.st.Run.Owner != e.cfg.Replica {
		return
	}
	e.parked.put(id, a.st)
	a.st = nil
	e.held.release(id)
}

// effects carries out what a stored step owes: its status events (statusEvents),
// dispatches, child runs, timers, and the end of a run that ended.
func (e *Engine) effects(ctx context.Context, id string, st *domain.State, m *domain.Machine, status []Message, claims []dispatchClaim) {
	runChanged, _, prevPhase := m.RunChanged()
	eff := m.Effects()
	msgs := slices.Clip(status)
	for _, i := range eff.Dispatch {
		if claimedOnDispatch(claims, i) {
			continue // its worker has it (claimOnDispatch)
		}
		msg, err := dispatch(st, i, e.now(), e.box)
		if err != nil {
			e.log.Error("cannot dispatch task run", "taskRun", st.Tasks[i].ID, "error", err)
			continue
		}
		msgs = append(msgs, msg)
	}
	e.pub.enqueue(traced(ctx, msgs), nil)
	e.queueEffects(st, m, eff.Dispatch, claims)
	e.gateEffects(st, eff)
	for _, i := range eff.StartChild {
		e.spawn(func(bg context.Context) { e.startChild(inTrace(bg, ctx), st.Run.ID, i) })
	}
	for _, i := range eff.Schedule {
		e.spawn(func(bg context.Context) { e.scheduleRun(inTrace(bg, ctx), st.Run.ID, i) })
	}
	if runChanged && st.Run.Phase.Ended() && !prevPhase.Ended() {
		if eff.RetryRun {
			e.spawn(func(bg context.Context) {
				ctx := inTrace(bg, ctx)
				if err := e.starter.RetryRun(ctx, id); err != nil && ctx.Err() == nil {
					e.log.Warn("cannot retry run", "run", id, "error", err)
				}
			})
		}
		e.ended(st)
		return
	}
	if st.Run.Phase.Ended() {
		// Ended before this step (a timer of another replica's, or one set before the end,
		// that fired once the run was put away): nothing of it is due, and the wake it was
		// stored with, long past, would fire again at once, for ever.
		e.timers.set(id, time.Time{})
		return
	}
	e.timers.set(id, st.Run.WakeAt)
}

// ended carries out what a completed run owes once its events are out: the runs below it
// cancelled if it was stopped, its slot back, its parent told, the run put away in the
// archive, the next queued run of its team started.
func (e *Engine) ended(st *domain.State) {
	r := st.Run
	id, team, parent, parentTask, status := r.ID, r.Team, r.ParentRun, r.ParentTask, r.Status
	// A run without an owner is in the archive already: it ended within its first step,
	// which no slot is taken for, or it was put away earlier (a finalize), slot released.
	// A child its parent waited for ran in its tree's slot.
	live := r.Owner != ""
	holdsSlot := live && !r.SharesSlot
	// What the parent is told, as it is now: the run in memory may move on (a finalize).
	done := &domain.Run{ID: id, Status: status, Results: maps.Clone(r.Results), SecretResults: slices.Clone(r.SecretResults)}
	locks, actions := gatesUsed(st)
	var ends map[string]actionEnd
	if actions {
		ends = actionEnds(st)
	}
	e.timers.set(id, time.Time{})
	if r.Stopped() {
		e.spawn(func(ctx context.Context) { e.cancelDescendants(ctx, id, status) })
	}
	if !live && parent == "" {
		return // nothing is owed but the events, on their way
	}
	e.pub.enqueue(nil, func() {
		e.spawn(func(ctx context.Context) {
			if holdsSlot {
				if err := e.slots.ReleaseSlot(ctx, team, id); err != nil {
					e.log.Warn("cannot release slot", "run", id, "error", err)
					return
				}
			}
			if parent != "" {
				if err := e.childEnded(ctx, parent, parentTask, done); err != nil {
					e.log.Warn("cannot tell the parent run", "run", parent, "child", id, "error", err)
					return
				}
			}
			if !live {
				return // in the archive already
			}
			// Before it is put away: a crash before this is done leaves the run in flight,
			// and its next load ends it again.
			if locks {
				if err := e.releaseRunLocks(ctx, id); err != nil {
					e.log.Warn("cannot release the run's locks", "run", id, "error", err)
					return
				}
			}
			if actions {
				if err := e.closeRunActions(ctx, id, status, ends); err != nil {
					e.log.Warn("cannot close the run's actions", "run", id, "error", err)
					return
				}
			}
			if err := e.archive(ctx, id); err != nil {
				e.log.Warn("cannot archive run", "run", id, "error", err)
				return
			}
			if holdsSlot {
				e.kickQueued(team)
			}
		})
	})
}

// archive puts an ended run away, as it is in memory (a finalize may have moved it since
// it ended), and lets go of it.
func (e *Engine) archive(ctx context.Context, id string) error {
	a := e.held.lock(id)
	defer e.held.unlock(id, a)
	if a.st == nil {
		if err := e.load(ctx, id, a); err != nil {
			return err
		}
	}
	r := *a.st.Run
	if r.Owner == "" {
		e.forget(id)
		return nil
	}
	tasks := make([]*domain.TaskRun, len(a.st.Tasks))
	for i, t := range a.st.Tasks {
		c := *t
		tasks[i] = &c
	}
	e.putAwayOwed(a.st, &r, tasks)
	if err := e.runs.Archive(ctx, &r, tasks); err != nil {
		a.st = nil
		return err
	}
	a.st.Run.Owner, a.st.Run.Queued = "", false
	e.forget(id)
	return nil
}

// built answers a status event, or logs why it could not be built: a step is not undone
// for an event.
func (e *Engine) built(m Message, err error) (Message, bool) {
	if err != nil {
		e.log.Error("cannot build a status event", "error", err)
		return Message{}, false
	}
	return m, true
}

// spawn runs fn in the background under Run's context.
func (e *Engine) spawn(fn func(ctx context.Context)) {
	<-e.ready
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		fn(e.bg)
	}()
}

// IsPhaseError reports whether err refuses a move for the phase the run is in.
func IsPhaseError(err error) bool {
	var p *domain.ErrInvalidPhase
	return errors.As(err, &p) || apperr.HasReason(err, apperr.WorkflowRunInvalidPhase)
}

// PhaseError turns a domain phase error into the contract's 409; other errors are
// returned as they are.
func PhaseError(err error) error {
	var p *domain.ErrInvalidPhase
	if errors.As(err, &p) {
		return apperr.New(apperr.WorkflowRunInvalidPhase, "Workflow run '%s' is %s (phase %s): the move is not allowed.", p.Run, p.Status, p.Phase)
	}
	return err
}

// TryStep applies fn to run id in memory, without storing anything and without waiting: it
// answers false, fn not called, when the run is not held here or a step holds it. owned
// tells fn whether the run is this replica's. A heartbeat moves a lease this way and does
// not wait behind a step.
func (e *Engine) TryStep(id string, fn func(m *domain.Machine, owned bool) bool) bool {
	a, held := e.held.cached(id)
	if !held || !a.mu.TryLock() {
		return false
	}
	defer a.mu.Unlock()
	if a.st == nil {
		return false
	}
	return fn(domain.NewMachine(a.st, e.now()), a.st.Run.Owner == e.cfg.Replica)
}

// gatesUsed reports whether a run has asked for locks or made actions: only then does its
// end look for them.
func gatesUsed(st *domain.State) (locks, actions bool) {
	for _, t := range st.Tasks {
		if t.Attempt == 0 || t.Kept {
			continue
		}
		switch {
		case t.Type == tasktype.AcquireLock || t.Type == tasktype.ReleaseLock:
			locks = true
		case domain.HasAction(t.Type):
			actions = true
		}
	}
	return locks, actions
}

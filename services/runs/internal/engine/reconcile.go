package engine

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Run moves runs until ctx ends: timers, the publisher, this replica's beat, queued runs
// and the runs of replicas that died.
func (e *Engine) Run(ctx context.Context) error {
	e.bgOnce.Do(func() {
		e.bg = ctx
		close(e.ready)
	})
	var wg sync.WaitGroup
	wg.Go(func() { e.pub.run(ctx) })
	wg.Go(func() {
		e.timers.run(ctx, e.now, func(run string) {
			e.spawn(func(ctx context.Context) {
				e.refresh(ctx, run)
				err := e.Step(ctx, run, func(m *domain.Machine) error {
					e.refreshHeartbeats(ctx, m)
					m.Tick(e.cfg.Lease)
					return nil
				})
				if err != nil && ctx.Err() == nil && !apperr.HasReason(err, apperr.WorkflowRunNotFound) {
					e.log.Warn("timer step failed", "run", run, "error", err)
					e.timers.set(run, e.now().Add(time.Second))
				}
			})
		})
	})
	wg.Go(func() { e.beatLoop(ctx) })
	wg.Go(func() { e.reconcileLoop(ctx) })
	wg.Go(func() { e.clearLoop(ctx) })
	wg.Wait()
	e.wg.Wait()
	return nil
}

// beatLoop says this replica is alive every Beat, on its own: a beat that waited behind a
// long reconcile would have the other replicas take this one's runs over.
func (e *Engine) beatLoop(ctx context.Context) {
	beat := time.NewTicker(e.cfg.Beat)
	defer beat.Stop()
	for {
		if err := e.replicas.MarkAlive(ctx, e.cfg.Replica, e.now()); err != nil && ctx.Err() == nil {
			e.log.Warn("replica beat failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
		}
	}
}

func (e *Engine) reconcileLoop(ctx context.Context) {
	rec := time.NewTicker(e.cfg.Reconcile)
	defer rec.Stop()
	e.reconcile(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-rec.C:
			e.reconcile(ctx)
		}
	}
}

// reconcile takes over the runs of dead replicas, starts queued runs, loads the runs of
// this replica that are out of memory and due soon or whose last step failed, cancels the
// children of stopped runs that a cascade missed, and applies what gates left owed. Between sweeps it asks the store only for
// those runs, never for every run in flight: the runs waiting on people may be many, and
// they should cost nothing while they wait.
func (e *Engine) reconcile(ctx context.Context) {
	seen, err := e.replicas.Replicas(ctx)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("cannot list replicas", "error", err)
		}
		return
	}
	now := e.now()
	// read is when seen was read: alive judges a replica's last beat from then.
	read := now
	alive := func(r string) bool {
		t, ok := seen[r]
		return r == e.cfg.Replica || (ok && read.Sub(t) < e.cfg.ReplicaTimeout)
	}
	var dead []string
	for r := range seen {
		if !alive(r) {
			dead = append(dead, r)
		}
	}
	var candidates []domain.InFlight
	sweep := e.lastSweep.IsZero() || now.Sub(e.lastSweep) >= sweepEvery
	if sweep {
		// Now and then, every run in flight: those of replicas nobody knows of (forgotten,
		// or gone before their first beat), and, at start, this replica's own (a restart
		// under the same name finds its runs out of memory).
		all, err := e.runs.ListInFlight(ctx, domain.InFlightFilter{})
		if err != nil {
			if ctx.Err() == nil {
				e.log.Warn("cannot list active runs", "error", err)
			}
			return
		}
		first := e.lastSweep.IsZero()
		e.lastSweep = now
		for _, a := range all {
			if (a.Owner == e.cfg.Replica && first) || !alive(a.Owner) {
				candidates = append(candidates, a)
			}
		}
	} else if len(dead) > 0 {
		if candidates, err = e.runs.ListInFlight(ctx, domain.InFlightFilter{Owners: dead}); err != nil {
			return
		}
	}
	left := map[string]bool{}
	for _, a := range candidates {
		if a.Owner == e.cfg.Replica {
			if !a.Queued && !e.held.holds(a.ID) {
				e.adopt(ctx, a)
			}
			continue
		}
		// Taking runs over one by one takes a while on a loaded store: a replica judged
		// dead at the start may have beaten since (it was slow, not dead). Its beats are
		// read again once seen is older than a beat, and it keeps its runs.
		if at := e.now(); at.Sub(read) > e.cfg.Beat {
			if fresh, err := e.replicas.Replicas(ctx); err == nil {
				seen, read = fresh, at
			}
		}
		if alive(a.Owner) {
			left[a.Owner] = true
			continue
		}
		took, err := e.runs.TakeOver(ctx, a.ID, a.Owner, e.cfg.Replica)
		if err != nil || !took {
			left[a.Owner] = left[a.Owner] || err != nil
			continue
		}
		e.log.Info("took over run", "run", a.ID, "from", a.Owner)
		e.metrics.repaired(repairTakeover)
		if a.Queued {
			e.queued.mark(a.Team)
		} else {
			// Held here already, it was loaded as another replica's run: load it again as
			// this one's, which settles what the dead replica left owed.
			e.held.drop(a.ID)
			e.adopt(ctx, a)
		}
	}
	for _, r := range dead {
		if !left[r] {
			_ = e.replicas.ForgetReplica(ctx, r)
		}
	}
	e.resendOwed(ctx, now)
	// Runs whose last step failed to store are reloaded from the truth.
	for _, id := range e.held.unloaded() {
		if e.adopt(ctx, domain.InFlight{ID: id, Phase: domain.PhaseRunning}) {
			e.metrics.repaired(repairReload)
		}
	}
	e.wakeSoon(ctx, now)
	if queued, err := e.runs.ListInFlight(ctx, domain.InFlightFilter{Queued: true}); err == nil {
		teams := map[string]bool{}
		for _, a := range queued {
			teams[a.Team] = true
		}
		for team := range teams {
			// Looked at again whatever this replica knows: this is what finds queued runs
			// that came here by another way than those marked.
			e.queued.mark(team)
			e.kickQueued(team)
		}
	}
	if children, err := e.runs.ListInFlight(ctx, domain.InFlightFilter{Owners: []string{e.cfg.Replica}, Children: true}); err == nil {
		e.cancelOrphans(ctx, children)
	}
	e.reconcileGates(ctx)
}

// sweepEvery is how often the reconciler looks at every run in flight for those of
// replicas nobody knows of.
const sweepEvery = 10 * time.Minute

// wakeSoon sets the timers of this replica's runs out of memory that have something due
// before the next reconcile but one, as stored: another replica's step may have moved such
// a run (a callback, a decision) and set its timer there only, and that replica may die.
// (A run in memory has its own timer, and a timer's step reloads it when it moved.) The
// query is on an index (owner, wakeAt): it finds the few runs due, never the many waiting.
func (e *Engine) wakeSoon(ctx context.Context, now time.Time) {
	due, err := e.runs.ListInFlight(ctx, domain.InFlightFilter{Owners: []string{e.cfg.Replica}, WakeBefore: now.Add(2 * e.cfg.Reconcile)})
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("cannot list runs due soon", "error", err)
		}
		return
	}
	for _, a := range due {
		// An ended run is due only when another replica ended it (commit): its load puts
		// it away if that replica died before it did.
		if !a.Queued && !e.held.holds(a.ID) {
			e.timers.soonest(a.ID, a.WakeAt)
		}
	}
}

// cancelOrphans cancels the child runs among held that a run above them was stopped
// for: the cancels of a cascade that a crash interrupted, or that could not be stored.
func (e *Engine) cancelOrphans(ctx context.Context, held []domain.InFlight) {
	var above []string
	for _, a := range held {
		if !a.Phase.Ended() {
			above = append(above, a.Ancestors...)
		}
	}
	if len(above) == 0 {
		return
	}
	slices.Sort(above)
	stopped, err := e.runs.FindStopped(ctx, slices.Compact(above))
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("cannot look at the runs above child runs", "error", err)
		}
		return
	}
	for _, a := range held {
		if a.Phase.Ended() {
			continue
		}
		for _, up := range a.Ancestors {
			if stopped[up] {
				if e.cancelRun(ctx, a.ID, "cancelled: run "+up+" above it was stopped") {
					e.metrics.repaired(repairOrphan)
				}
				break
			}
		}
	}
}

// refresh drops a run held in memory, or parked with its state, when the stored run has
// moved on: another replica applied a claim, a report or a decision to it, or took it
// over. A timer's step must see that, since its own moves (sending a dispatch again,
// calling a runner lost, timing out a gate) may write nothing that a stale copy would be
// refused on, and a step that writes nothing would park the stale copy again.
func (e *Engine) refresh(ctx context.Context, id string) {
	if v, ok := e.parked.keptVersion(id); ok {
		if r, err := e.runs.FindRun(ctx, id); err != nil || r.Version != v {
			e.parked.drop(id)
		}
	}
	a, ok := e.held.cached(id)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.st == nil {
		return
	}
	if r, err := e.runs.FindRun(ctx, id); err != nil || r.Version != a.st.Run.Version {
		a.st = nil
	}
}

// refreshHeartbeats reads the stored heartbeats of runners this replica has not heard
// from within the lease: they may beat through another replica.
func (e *Engine) refreshHeartbeats(ctx context.Context, m *domain.Machine) {
	for _, t := range m.S.Tasks {
		if t.Status != domain.Running || t.Runner == "" || m.Now.Sub(t.Heartbeat) <= e.cfg.Lease {
			continue
		}
		b, ok, err := e.beats.LastHeartbeat(ctx, t.ID)
		if err == nil && ok && b.Runner == t.Runner && b.Attempt == t.Attempt && b.At.After(t.Heartbeat) {
			t.Heartbeat = b.At
		}
	}
}

// adopt loads a run this replica holds but does not have in memory. Loading recovers it:
// undecided tasks, dispatches, timers, an unfinished end. A run stored but never started
// is queued instead. It reports whether the run was stored recovered or queued.
func (e *Engine) adopt(ctx context.Context, a domain.InFlight) bool {
	if a.Phase == domain.Queued {
		if e.runs.SetQueued(ctx, a.ID, true) == nil {
			e.queued.mark(a.Team)
			return true
		}
		return false
	}
	if err := e.Step(ctx, a.ID, func(*domain.Machine) error { return nil }); err != nil {
		if ctx.Err() == nil {
			e.log.Warn("cannot recover run", "run", a.ID, "error", err)
		}
		return false
	}
	return true
}

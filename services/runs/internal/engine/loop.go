package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/mongostore"
)

// Claim gives a runner the current attempt of a task run; false when it is not to be had
// (claimed already, cancelled, overtaken by a retry).
func (e *Engine) Claim(ctx context.Context, taskRunID string, attempt int, runner string) (bool, error) {
	run, i, ok := domain.ParseTaskRunID(taskRunID)
	if !ok {
		return false, apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", taskRunID)
	}
	claimed := false
	err := e.with(ctx, run, func(m *domain.Machine) error {
		if i >= len(m.S.Tasks) {
			return apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", taskRunID)
		}
		if claimed = m.Claim(i, attempt, runner); !claimed {
			return refusal(m, i, attempt)
		}
		return nil
	})
	if errors.Is(err, errSkip) {
		return false, nil
	}
	return claimed, err
}

// refusal is why a claim or report of attempt of task i was refused: errStale when the
// state in memory has not seen that attempt yet, so a fresher one might accept it, and
// errSkip otherwise. An attempt only moves forward (ready, running, ended, then the next
// attempt), so a refusal decided on a state that has seen it holds on any later state:
// repeated dispatches and reports cost no read of the store.
func refusal(m *domain.Machine, i, attempt int) error {
	if m.S.Tasks[i].Attempt < attempt {
		return errStale
	}
	return errSkip
}

// Heartbeat records that runner still executes an attempt. cancel asks it to stop; ok is
// false when the attempt is no longer the runner's.
func (e *Engine) Heartbeat(ctx context.Context, taskRunID string, attempt int, runner string) (cancel, ok bool, err error) {
	run, i, valid := domain.ParseTaskRunID(taskRunID)
	if !valid {
		return false, false, apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", taskRunID)
	}
	now := e.now()
	// The replica that owns the run answers from memory, where it keeps the lease. The
	// beat is still stored once per beatEvery: a replica that loaded the run to apply a
	// claim or a report may tick it, and reads stored beats before calling a runner lost.
	if cancel, ok, known := e.beatInMemory(run, i, attempt, runner, now, true); known && ok {
		if !cancel && !e.beats.fresh(taskRunID, attempt, runner, now, e.beatEvery()) {
			if err := e.store.SaveBeat(ctx, taskRunID, attempt, runner, now); err != nil {
				return false, false, err
			}
			e.beats.stored(taskRunID, attempt, runner, now)
		}
		return cancel, true, nil
	}
	// Elsewhere the stored task run is the truth: the attempt may have moved on through
	// another replica. It is asked (and the beat stored, for the owner to read) once per
	// beatEvery of an attempt.
	if e.beats.fresh(taskRunID, attempt, runner, now, e.beatEvery()) {
		// Unless the run held here shows the attempt moved on: then ask the store.
		if cancel, ok, known := e.beatInMemory(run, i, attempt, runner, now, false); !known || ok {
			return cancel, true, nil
		}
	}
	t, matched, err := e.store.Heartbeat(ctx, taskRunID, attempt, runner, now)
	if err != nil {
		return false, false, err
	}
	if matched {
		e.beats.stored(taskRunID, attempt, runner, now)
		e.beatInMemory(run, i, attempt, runner, now, false)
		return false, true, nil
	}
	if t.Attempt == attempt && t.Runner == runner {
		// Still this runner's attempt, but no longer running: cancelled or timed out.
		return true, true, nil
	}
	return false, false, nil
}

// beatInMemory moves the lease of task i of run, when the run is held here (and owned by
// this replica, if owned) and free: a heartbeat does not wait behind a step. known is
// false when it could not look.
func (e *Engine) beatInMemory(run string, i, attempt int, runner string, now time.Time, owned bool) (cancel, ok, known bool) {
	a, held := e.cached(run)
	if !held || !a.mu.TryLock() {
		return false, false, false
	}
	defer a.mu.Unlock()
	if a.st == nil || i >= len(a.st.Tasks) || (owned && a.st.Run.Owner != e.cfg.Replica) {
		return false, false, false
	}
	cancel, ok = domain.NewMachine(a.st, now).Heartbeat(i, attempt, runner)
	return cancel, ok, true
}

// beatEvery is how often an attempt's heartbeat is stored: often enough that a replica
// reading it (one that did not hear the runner itself) never finds it older than the lease.
func (e *Engine) beatEvery() time.Duration { return e.cfg.Lease / 4 }

// beatCache remembers when each attempt's heartbeat was last stored by this replica.
type beatCache struct {
	mu   sync.Mutex
	last map[string]storedBeat
}

type storedBeat struct {
	attempt int
	runner  string
	at      time.Time
}

// fresh reports whether the attempt's heartbeat was stored within every.
func (c *beatCache) fresh(id string, attempt int, runner string, now time.Time, every time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.last[id]
	return ok && b.attempt == attempt && b.runner == runner && now.Sub(b.at) < every
}

func (c *beatCache) stored(id string, attempt int, runner string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]storedBeat{}
	}
	c.last[id] = storedBeat{attempt: attempt, runner: runner, at: now}
}

// prune forgets heartbeats stored before cutoff.
func (c *beatCache) prune(cutoff time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, b := range c.last {
		if b.at.Before(cutoff) {
			delete(c.last, id)
		}
	}
}

// HandleUpdate applies a runner's or worker's report.
func (e *Engine) HandleUpdate(ctx context.Context, u events.TaskUpdate) error {
	run, i, ok := domain.ParseTaskRunID(u.TaskRunID)
	if !ok {
		return nil
	}
	switch u.Kind {
	case events.UpdateLog:
		return e.store.AppendLog(ctx, u.TaskRunID, u.Attempt, u.Seq, u.Log)
	case events.UpdateEnded:
		status := domain.Status(strings.ToLower(u.Status))
		switch status {
		case domain.Succeeded, domain.Failed, domain.TimedOut, domain.Cancelled:
		default:
			status = domain.Failed
		}
		results, secret, err := e.openResults(u.Results)
		msg := u.Message
		if err != nil && status == domain.Succeeded {
			status, msg = domain.Failed, err.Error()
		}
		err = e.with(ctx, run, func(m *domain.Machine) error {
			if i >= len(m.S.Tasks) {
				return errSkip
			}
			if !m.Ended(i, u.Attempt, status, msg, results, secret) {
				return refusal(m, i, u.Attempt)
			}
			return nil
		})
		if errors.Is(err, errSkip) || apperr.HasReason(err, apperr.WorkflowRunNotFound) {
			return nil
		}
		return err
	}
	return nil
}

// openResults opens the results a runner sent sealed, because they hold a secret, and
// names them.
func (e *Engine) openResults(in map[string]string) (map[string]string, []string, error) {
	var secret []string
	out := in
	for name, v := range in {
		if !secrets.IsSealed(v) {
			continue
		}
		if e.box == nil {
			return nil, nil, fmt.Errorf("result '%s' is sealed and the runs service has no secret key", name)
		}
		plain, err := e.box.Open(v)
		if err != nil {
			return nil, nil, fmt.Errorf("result '%s': %w", name, err)
		}
		if secret == nil {
			out = maps.Clone(in)
		}
		out[name] = plain
		secret = append(secret, name)
	}
	return out, secret, nil
}

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
				err := e.with(ctx, run, func(m *domain.Machine) error {
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
		if err := e.store.Beat(ctx, e.cfg.Replica, e.now()); err != nil && ctx.Err() == nil {
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
	purge := time.NewTicker(time.Hour)
	defer purge.Stop()
	e.reconcile(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-purge.C:
			if err := e.store.PurgeKeys(ctx, e.now()); err != nil && ctx.Err() == nil {
				e.log.Warn("cannot purge idempotency keys", "error", err)
			}
			if err := e.store.PurgeBeats(ctx, e.now()); err != nil && ctx.Err() == nil {
				e.log.Warn("cannot purge heartbeats", "error", err)
			}
		case <-rec.C:
			e.reconcile(ctx)
			e.beats.prune(e.now().Add(-e.beatEvery()))
		}
	}
}

// reconcile takes over the runs of dead replicas, starts queued runs and cancels the
// children of stopped runs that a cascade missed.
func (e *Engine) reconcile(ctx context.Context) {
	all, err := e.store.ListActive(ctx)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("cannot list active runs", "error", err)
		}
		return
	}
	seen, err := e.store.Replicas(ctx)
	if err != nil {
		return
	}
	now := e.now()
	alive := func(r string) bool {
		t, ok := seen[r]
		return r == e.cfg.Replica || (ok && now.Sub(t) < e.cfg.ReplicaTimeout)
	}
	dead := map[string]bool{}
	var mine []mongostore.Active
	for _, a := range all {
		if a.Owner == e.cfg.Replica {
			mine = append(mine, a)
		}
		if a.Owner == e.cfg.Replica && !a.Queued {
			// A run of ours whose last step failed to store is reloaded from the truth.
			if !e.inMemory(a.ID) {
				e.adopt(ctx, a)
			}
			continue
		}
		if alive(a.Owner) {
			continue
		}
		dead[a.Owner] = true
		took, err := e.store.TakeOver(ctx, a.ID, a.Owner, e.cfg.Replica)
		if err != nil || !took {
			continue
		}
		e.log.Info("took over run", "run", a.ID, "from", a.Owner)
		mine = append(mine, a)
		if !a.Queued {
			// Held here already, it was loaded as another replica's run: load it again as
			// this one's, which settles what the dead replica left owed.
			e.drop(a.ID)
			e.adopt(ctx, a)
		}
	}
	for r := range dead {
		if _, ok := seen[r]; ok {
			_ = e.store.ForgetReplica(ctx, r)
		}
	}
	teams := map[string]bool{}
	for _, a := range all {
		if a.Queued {
			teams[a.Team] = true
		}
	}
	for team := range teams {
		e.kickQueued(team)
	}
	e.cancelOrphans(ctx, mine)
}

// cancelOrphans cancels the child runs among held that a run above them was stopped
// for: the cancels of a cascade that a crash interrupted, or that could not be stored.
func (e *Engine) cancelOrphans(ctx context.Context, held []mongostore.Active) {
	var above []string
	for _, a := range held {
		if !domain.Phase(a.Phase).Ended() {
			above = append(above, a.Ancestors...)
		}
	}
	if len(above) == 0 {
		return
	}
	slices.Sort(above)
	stopped, err := e.store.FindStopped(ctx, slices.Compact(above))
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("cannot look at the runs above child runs", "error", err)
		}
		return
	}
	for _, a := range held {
		if domain.Phase(a.Phase).Ended() {
			continue
		}
		for _, up := range a.Ancestors {
			if stopped[up] {
				e.cancelRun(ctx, a.ID, "cancelled: run "+up+" above it was stopped")
				break
			}
		}
	}
}

// refresh drops a run held in memory when the stored run has moved on: another replica
// applied a claim or a report to it. A timer's step must see that, since its own moves
// (sending a dispatch again, calling a runner lost) may write nothing that a stale copy
// would be refused on.
func (e *Engine) refresh(ctx context.Context, id string) {
	a, ok := e.cached(id)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.st == nil {
		return
	}
	if r, err := e.store.FindRun(ctx, id, false); err != nil || r.Version != a.st.Run.Version {
		a.st = nil
	}
}

// drop makes the next step of a run held in memory load it first.
func (e *Engine) drop(id string) {
	if a, ok := e.cached(id); ok {
		a.mu.Lock()
		a.st = nil
		a.mu.Unlock()
	}
}

// inMemory reports whether a run is held in memory, or being worked on.
func (e *Engine) inMemory(id string) bool {
	a, ok := e.cached(id)
	if !ok {
		return false
	}
	if !a.mu.TryLock() {
		return true
	}
	defer a.mu.Unlock()
	return a.st != nil
}

// refreshHeartbeats reads the stored heartbeats of runners this replica has not heard
// from within the lease: they may beat through another replica.
func (e *Engine) refreshHeartbeats(ctx context.Context, m *domain.Machine) {
	for _, t := range m.S.Tasks {
		if t.Status != domain.Running || t.Runner == "" || m.Now.Sub(t.Heartbeat) <= e.cfg.Lease {
			continue
		}
		b, ok, err := e.store.LastBeat(ctx, t.ID)
		if err == nil && ok && b.Runner == t.Runner && b.Attempt == t.Attempt && b.At.After(t.Heartbeat) {
			t.Heartbeat = b.At
		}
	}
}

// adopt loads a run this replica holds but does not have in memory. Loading recovers it:
// undecided tasks, dispatches, timers, an unfinished end. A run stored but never started
// is queued instead.
func (e *Engine) adopt(ctx context.Context, a mongostore.Active) {
	if domain.Phase(a.Phase) == domain.Queued {
		_ = e.store.SetQueued(ctx, a.ID, true)
		return
	}
	if err := e.with(ctx, a.ID, func(*domain.Machine) error { return nil }); err != nil && ctx.Err() == nil {
		e.log.Warn("cannot recover run", "run", a.ID, "error", err)
	}
}

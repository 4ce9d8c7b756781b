package engine

import (
	"container/list"
	"sync"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// actor is one run held in memory; its mutex orders the run's steps on this replica.
type actor struct {
	mu sync.Mutex
	st *domain.State
	// idle is set when the run only waits, as of its last stored step (see park).
	idle bool
	// users counts the callers of actors.lock holding mu or waiting for it, and released
	// says the run left memory while any did; both are guarded by actors.mu.
	users    int
	released bool
}

// actors holds the runs in memory, one actor each.
type actors struct {
	mu sync.Mutex
	m  map[string]*actor
}

// lock answers run id's actor, made if there is none, with its mutex held; unlock lets go
// of it. An actor stays its run's while anyone holds it or waits for it, even once the
// run left memory (release): a step that waited for it, and any that comes after, take
// it in turn rather than a new actor beside it. Two steps of a run side by side would
// each read the other's step half stored (its task runs written, its run not yet).
func (h *actors) lock(id string) *actor {
	h.mu.Lock()
	a, ok := h.m[id]
	if !ok {
		a = &actor{}
		h.m[id] = a
	}
	a.users++
	h.mu.Unlock()
	a.mu.Lock()
	h.mu.Lock()
	// The step before may have let the run go: keeping it is this one's to decide now.
	a.released = false
	h.mu.Unlock()
	return a
}

// unlock lets go of the actor lock answered, and drops it once the run left memory and
// nobody else holds it or waits for it.
func (h *actors) unlock(id string, a *actor) {
	h.mu.Lock()
	a.users--
	if a.users == 0 && a.released && h.m[id] == a {
		delete(h.m, id)
	}
	h.mu.Unlock()
	a.mu.Unlock()
}

// get answers run id's actor, made if there is none, and keeps it in memory: without its
// state, the reconciler loads it (unloaded).
func (h *actors) get(id string) *actor {
	h.mu.Lock()
	defer h.mu.Unlock()
	a, ok := h.m[id]
	if !ok {
		a = &actor{}
		h.m[id] = a
	}
	a.released = false
	return a
}

// cached answers run id's actor if there is one.
func (h *actors) cached(id string) (*actor, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a, ok := h.m[id]
	return a, ok
}

// release drops a run from memory, once its lock is let go of (unlock); the caller holds
// the run's lock.
func (h *actors) release(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a, ok := h.m[id]; ok {
		a.released = true
	}
}

// drop makes the next step of a run held in memory load it first.
func (h *actors) drop(id string) {
	if a, ok := h.cached(id); ok {
		a.mu.Lock()
		a.st = nil
		a.mu.Unlock()
	}
}

// unloaded lists the runs held in memory without their state and not being worked on:
// those whose last step failed to store.
func (h *actors) unloaded() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for id, a := range h.m {
		if a.mu.TryLock() {
			if a.st == nil && !a.released {
				out = append(out, id)
			}
			a.mu.Unlock()
		}
	}
	return out
}

// holds reports whether a run is held in memory, or being worked on.
func (h *actors) holds(id string) bool {
	a, ok := h.cached(id)
	if !ok {
		return false
	}
	if !a.mu.TryLock() {
		return true
	}
	defer a.mu.Unlock()
	return a.st != nil
}

// parkedRuns are the runs this replica put out of memory with nothing owed (park), each
// with the versions it left them at, its run's and its task runs': a run loaded again as
// it was left needs no settling.
//
// The last keep of them also keep their state: a decision or a callback often comes soon
// after its run began to wait, and the run is then taken up again without reading it back
// (Engine.unpark, which says why that holds with other replicas writing too). Older ones
// keep only their versions: memory stays bounded whatever the number of waiting runs.
type parkedRuns struct {
	mu   sync.Mutex
	m    map[string]*parkedRun
	kept list.List // of run ids whose state is kept, oldest first
	keep int
	// owed are runs whose last step could not do all it owed (a lock not asked for, a
	// queue not left): not parked again, nor taken as parked, until they are loaded and
	// settled. The mark is made from a goroutine of its own, which may run before or after
	// the step that owes parks the run: either way the next load settles it.
	owed map[string]bool
}

type parkedRun struct {
	version int64
	tasks   []int64
	st      *domain.State
	el      *list.Element
}

func newParkedRuns(keep int) parkedRuns {
	return parkedRuns{m: map[string]*parkedRun{}, keep: keep, owed: map[string]bool{}}
}

// put records run id parked as st is stored, and keeps st among the last keep.
func (p *parkedRuns) put(id string, st *domain.State) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLocked(id)
	if p.owed[id] {
		return
	}
	r := &parkedRun{version: st.Run.Version, tasks: make([]int64, len(st.Tasks))}
	for i, t := range st.Tasks {
		r.tasks[i] = t.Version
	}
	p.m[id] = r
	if p.keep == 0 {
		return
	}
	r.st, r.el = st, p.kept.PushBack(id)
	if p.kept.Len() > p.keep {
		oldest := p.kept.Remove(p.kept.Front()).(string)
		if o := p.m[oldest]; o != nil {
			o.st, o.el = nil, nil
		}
	}
}

func (p *parkedRuns) dropLocked(id string) *parkedRun {
	r, ok := p.m[id]
	if !ok {
		return nil
	}
	delete(p.m, id)
	if r.el != nil {
		p.kept.Remove(r.el)
	}
	return r
}

// owe forgets run id and marks it owed until it is taken (take).
func (p *parkedRuns) owe(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLocked(id)
	p.owed[id] = true
}

// drop forgets run id.
func (p *parkedRuns) drop(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLocked(id)
}

// take forgets run id, and reports whether it was parked as run and tasks are stored. The
// run's version alone does not tell: a step stored in part moved its task runs, not its
// run (RunStore.SaveStep), and what that step owes is still to be settled.
func (p *parkedRuns) take(id string, run *domain.Run, tasks []*domain.TaskRun) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.dropLocked(id)
	if p.owed[id] {
		// Loaded to be settled: what it owes is derived again from what is stored.
		delete(p.owed, id)
		return false
	}
	if r == nil || r.version != run.Version || len(r.tasks) != len(tasks) {
		return false
	}
	for i, t := range tasks {
		if r.tasks[i] != t.Version {
			return false
		}
	}
	return true
}

// has reports whether run id is parked here.
func (p *parkedRuns) has(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.m[id]
	return ok
}

// keptVersion answers the version of run id's run as parked, when its state is kept.
func (p *parkedRuns) keptVersion(id string) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.m[id]; r != nil && r.st != nil {
		return r.version, true
	}
	return 0, false
}

// takeState forgets run id and answers its state when it was kept.
func (p *parkedRuns) takeState(id string) *domain.State {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.m[id]; r != nil && r.st != nil {
		p.dropLocked(id)
		return r.st
	}
	return nil
}

package engine

import (
	"sync"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// actor is one run held in memory; its mutex orders the run's steps.
type actor struct {
	mu sync.Mutex
	st *domain.State
	// idle is set when the run only waits, as of its last stored step (see park).
	idle bool
}

// actors holds the runs in memory, one actor each.
type actors struct {
	mu sync.Mutex
	m  map[string]*actor
}

// get answers run id's actor, made if there is none.
func (h *actors) get(id string) *actor {
	h.mu.Lock()
	defer h.mu.Unlock()
	a, ok := h.m[id]
	if !ok {
		a = &actor{}
		h.m[id] = a
	}
	return a
}

// cached answers run id's actor if there is one.
func (h *actors) cached(id string) (*actor, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a, ok := h.m[id]
	return a, ok
}

// release drops a run from memory; the caller may hold the run's lock.
func (h *actors) release(id string) {
	h.mu.Lock()
	delete(h.m, id)
	h.mu.Unlock()
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
			if a.st == nil {
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
// with the version it left them at: a run loaded again at that version needs no settling.
type parkedRuns struct {
	mu sync.Mutex
	m  map[string]int64
}

func (p *parkedRuns) put(id string, version int64) {
	p.mu.Lock()
	p.m[id] = version
	p.mu.Unlock()
}

// take forgets run id, and reports whether it was parked at version.
func (p *parkedRuns) take(id string, version int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.m[id]
	delete(p.m, id)
	return ok && v == version
}

package engine

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// timers wakes runs when something of theirs is due: one entry per run, the earliest.
type timers struct {
	mu   sync.Mutex
	at   map[string]time.Time
	h    timerHeap
	wake chan struct{}
}

type timerEntry struct {
	run string
	at  time.Time
}

type timerHeap []timerEntry

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(timerEntry)) }
func (h *timerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newTimers() *timers {
	return &timers{at: map[string]time.Time{}, wake: make(chan struct{}, 1)}
}

// set makes at the run's next wake; zero clears it. Stale heap entries are skipped when
// they surface.
func (t *timers) set(run string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if at.IsZero() {
		delete(t.at, run)
		return
	}
	if cur, ok := t.at[run]; ok && cur.Equal(at) {
		return
	}
	t.at[run] = at
	heap.Push(&t.h, timerEntry{run: run, at: at})
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// due pops the runs due at now and returns how long until the next.
func (t *timers) due(now time.Time) ([]string, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for t.h.Len() > 0 {
		top := t.h[0]
		if cur, ok := t.at[top.run]; !ok || !cur.Equal(top.at) {
			heap.Pop(&t.h)
			continue
		}
		if top.at.After(now) {
			return out, top.at.Sub(now)
		}
		heap.Pop(&t.h)
		delete(t.at, top.run)
		out = append(out, top.run)
	}
	return out, time.Minute
}

// run calls fire for each run as it falls due, until ctx ends.
func (t *timers) run(ctx context.Context, now func() time.Time, fire func(run string)) {
	for {
		runs, wait := t.due(now())
		for _, r := range runs {
			fire(r)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-t.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

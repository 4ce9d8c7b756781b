package engine

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// timers wakes runs when something of theirs is due: one entry per run, the earliest, in
// a heap that drops an entry as soon as it is cleared, so runs put out of memory leave
// nothing behind.
type timers struct {
	mu   sync.Mutex
	at   map[string]*timerEntry
	h    timerHeap
	wake chan struct{}
}

type timerEntry struct {
	run   string
	at    time.Time
	index int
}

type timerHeap []*timerEntry

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	e := x.(*timerEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *timerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}

func newTimers() *timers {
	return &timers{at: map[string]*timerEntry{}, wake: make(chan struct{}, 1)}
}

// set makes at the run's next wake; zero clears it.
func (t *timers) set(run string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.setLocked(run, at)
}

// soonest makes at the run's next wake unless an earlier one is set already.
func (t *timers) soonest(run string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur, ok := t.at[run]; !ok || at.Before(cur.at) {
		t.setLocked(run, at)
	}
}

func (t *timers) setLocked(run string, at time.Time) {
	cur, ok := t.at[run]
	switch {
	case at.IsZero():
		if ok {
			heap.Remove(&t.h, cur.index)
			delete(t.at, run)
		}
		return
	case ok && cur.at.Equal(at):
		return
	case ok:
		cur.at = at
		heap.Fix(&t.h, cur.index)
	default:
		e := &timerEntry{run: run, at: at}
		t.at[run] = e
		heap.Push(&t.h, e)
	}
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

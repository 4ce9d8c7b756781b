package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// loadCounter counts the loads of each run from the store, and answers the runs with
// the wake they were stored with.
type loadCounter struct {
	RunStore
	wake time.Time
	mu   sync.Mutex
	n    map[string]int
}

func (c *loadCounter) FindRun(ctx context.Context, id string) (*domain.Run, error) {
	c.mu.Lock()
	c.n[id]++
	c.mu.Unlock()
	r, err := c.RunStore.FindRun(ctx, id)
	if err == nil {
		r.WakeAt = c.wake
	}
	return r, err
}

func (c *loadCounter) loads(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[id]
}

// A timer that fires once its run is put away (another replica's timer, set by a step it
// took on the run before the end) loads the run once: the wake the run was stored with,
// long past, is not set again, which would fire at once, for ever.
func TestEngineTimerOfARunPutAwayFiresOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.start("a")
	run := h.submit(a, oneScript())
	h.finish(a, run, "work", 1, domain.Succeeded, nil)
	h.ends(run, domain.Succeeded)
	require.Eventually(t, func() bool { r, _ := h.stored(run); return r.Owner == "" }, within, time.Millisecond, "put away")
	// Ended on a replica that was not its owner, the run was stored to wake its owner soon
	// (Engine.commit), and put away so.
	stored := h.clock.Now().Add(-time.Minute)
	counter := &loadCounter{RunStore: h.store, wake: stored, n: map[string]int{}}
	h.runs = counter
	b := h.start("b")
	b.timers.set(run, stored)
	b.timers.wake <- struct{}{}
	require.Eventually(t, func() bool { return counter.loads(run) > 0 }, within, time.Millisecond, "the timer fired")
	assert.Never(t, func() bool { return counter.loads(run) > 1 }, 100*time.Millisecond, time.Millisecond, "loaded again and again")
}

package mongox

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Callers that come while a write is under way share the next one, each gets its own
// answer, and none waits for a write it is not part of.
func TestCombinerSharesWrites(t *testing.T) {
	t.Parallel()
	first := make(chan struct{})
	release := make(chan struct{})
	var mu sync.Mutex
	var batches [][]int
	c := NewCombiner(4, func(_ context.Context, reqs []int) []int {
		mu.Lock()
		batches = append(batches, append([]int(nil), reqs...))
		n := len(batches)
		mu.Unlock()
		if n == 1 {
			close(first)
			<-release // the first write lasts until the others queued behind it
		}
		out := make([]int, len(reqs))
		for i, r := range reqs {
			out[i] = r * 10
		}
		return out
	})
	var wg sync.WaitGroup
	got := make([]int, 10)
	wg.Go(func() { got[0] = c.Do(t.Context(), 0) })
	<-first
	queued := make(chan struct{}, 9)
	for i := 1; i < 10; i++ {
		wg.Go(func() {
			queued <- struct{}{}
			got[i] = c.Do(t.Context(), i)
		})
	}
	for range 9 {
		<-queued
	}
	// Each waiter is in the queue once do took the lock; wait until all nine are.
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.pending) == 9
	}, testWait, testTick)
	close(release)
	wg.Wait()
	for i, g := range got {
		assert.Equal(t, i*10, g, "caller %d's own answer", i)
	}
	mu.Lock()
	defer mu.Unlock()
	sizes := []int{}
	for _, b := range batches {
		sizes = append(sizes, len(b))
	}
	assert.Equal(t, []int{1, 4, 4, 1}, sizes, "the first alone, then the queue in writes of at most 4")
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.False(t, c.busy, "idle once the queue is empty")
}

const (
	testWait = 10 * time.Second
	testTick = time.Millisecond
)

package app

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blockingContexts answers a team's context once released, counting the reads.
type blockingContexts struct {
	reads   atomic.Int64
	release chan struct{}
}

func (b *blockingContexts) RunContext(ctx context.Context, team string) (TeamContext, error) {
	b.reads.Add(1)
	select {
	case <-b.release:
		return TeamContext{MaxConcurrent: 7}, nil
	case <-ctx.Done():
		return TeamContext{}, ctx.Err()
	}
}

// The submits that miss a team's context together wait for one read of it; one whose
// context ends stops waiting without ending the read for the others.
func TestContextCacheReadsOnceForABurst(t *testing.T) {
	t.Parallel()
	src := &blockingContexts{release: make(chan struct{})}
	c := newContextCache(src, time.Hour)

	gone, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := c.get(gone, "infra")
		first <- err
	}()
	require.Eventually(t, func() bool { return src.reads.Load() == 1 }, 10*time.Second, time.Millisecond)
	const n = 20
	var wg sync.WaitGroup
	got := make([]TeamContext, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { got[i], errs[i] = c.get(context.Background(), "infra") })
	}
	cancel()
	assert.ErrorIs(t, <-first, context.Canceled, "the first caller stops waiting when it is gone")
	close(src.release)
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, 7, got[i].MaxConcurrent)
	}
	assert.EqualValues(t, 1, src.reads.Load(), "one read for the burst, its first caller gone or not")
}

package mongox

import (
	"context"
	"sync"
	"time"
)

// Combiner makes one write of the writes callers ask for while the previous one is under
// way: under load many writes share a command, and a caller alone waits for nothing.
// There is no timer: the caller that finds the combiner idle writes its own request at
// once; those that come meanwhile queue, and when a write is done the first of them writes
// everything queued, itself included, up to max.
type Combiner[T, R any] struct {
	// flush writes reqs and answers each one's result, in order.
	flush func(ctx context.Context, reqs []T) []R
	max   int

	mu      sync.Mutex
	busy    bool
	pending []*combined[T, R]
}

// flushTimeout bounds a combined write, which no single caller's context may cut short.
const flushTimeout = 30 * time.Second

type combined[T, R any] struct {
	req T
	res R
	// wake says the request was written (false) or that its caller writes next (true).
	wake chan bool
}

// NewCombiner returns a Combiner writing at most max requests a command with flush, which
// answers each request's result, in order.
func NewCombiner[T, R any](max int, flush func(ctx context.Context, reqs []T) []R) *Combiner[T, R] {
	return &Combiner[T, R]{flush: flush, max: max}
}

// Do writes req, with whatever else is asked meanwhile, and answers its result. A write of
// several outlives ctx: other callers' requests ride on it; a write of req alone is cut
// short with ctx, as a write without the combiner would be.
func (c *Combiner[T, R]) Do(ctx context.Context, req T) R {
	me := &combined[T, R]{req: req, wake: make(chan bool, 1)}
	c.mu.Lock()
	c.pending = append(c.pending, me)
	lead := !c.busy
	c.busy = true
	c.mu.Unlock()
	if !lead && !<-me.wake {
		return me.res
	}
	// Leading: me is first in the queue.
	c.mu.Lock()
	n := min(len(c.pending), c.max)
	batch := make([]*combined[T, R], n)
	copy(batch, c.pending)
	c.pending = c.pending[n:]
	c.mu.Unlock()
	reqs := make([]T, n)
	for i, b := range batch {
		reqs[i] = b.req
	}
	if n > 1 {
		ctx = context.WithoutCancel(ctx)
	}
	fctx, cancel := context.WithTimeout(ctx, flushTimeout)
	res := c.flush(fctx, reqs)
	cancel()
	for i, b := range batch {
		b.res = res[i]
		if b != me {
			b.wake <- false
		}
	}
	c.mu.Lock()
	if len(c.pending) > 0 {
		c.pending[0].wake <- true
	} else {
		c.busy = false
	}
	c.mu.Unlock()
	return me.res
}

package engine

import (
	"context"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// queueEffects keeps the queues of workers over HTTP in step with a stored step of st:
// the generic attempts it dispatched are queued, those of generic tasks that moved on
// (claimed, ended, retried) are not any more. A write that fails has the run loaded
// again (owe), whose load dispatches what is ready again, and so queues it.
func (e *Engine) queueEffects(st *domain.State, m *domain.Machine, dispatched []int) {
	if e.queues == nil {
		return
	}
	var put []domain.QueuedAttempt
	for _, i := range dispatched {
		if q, ok := st.QueuedOf(i, e.now()); ok {
			put = append(put, q)
		}
	}
	var gone []string
	for i, was := range m.Changed() {
		t := st.Tasks[i]
		if t.Type == tasktype.Generic && was == domain.Ready && t.Status != domain.Ready {
			gone = append(gone, domain.AttemptID(t.ID, t.Attempt))
		}
	}
	if len(put) == 0 && len(gone) == 0 {
		return
	}
	run := st.Run.ID
	e.spawn(func(ctx context.Context) {
		if err := e.queues.PutQueued(ctx, put); err != nil {
			if ctx.Err() == nil {
				e.log.Warn("cannot queue attempts for workers", "run", run, "error", err)
				e.owe(run)
			}
			return
		}
		for _, q := range put {
			e.queueWake.fire(q.Team, q.Queue)
		}
		if err := e.queues.DeleteQueued(ctx, gone...); err != nil && ctx.Err() == nil {
			// A claim finds it gone from its task run and deletes it then.
			e.log.Warn("cannot take attempts out of their queue", "run", run, "error", err)
		}
	})
}

// QueueWake answers a channel closed once this replica next queues an attempt in queue of
// team: a claim waiting for one looks again then, rather than at its next look at the store.
func (e *Engine) QueueWake(team, queue string) <-chan struct{} {
	return e.queueWake.wait(team, queue)
}

// queueSignals wakes what waits on a queue.
type queueSignals struct {
	mu sync.Mutex
	ch map[[2]string]chan struct{}
}

func (s *queueSignals) wait(team, queue string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := [2]string{team, queue}
	c, ok := s.ch[key]
	if !ok {
		if s.ch == nil {
			s.ch = map[[2]string]chan struct{}{}
		}
		c = make(chan struct{})
		s.ch[key] = c
	}
	return c
}

func (s *queueSignals) fire(team, queue string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := [2]string{team, queue}
	if c, ok := s.ch[key]; ok {
		close(c)
		delete(s.ch, key)
	}
}

// Lease is how long a runner or worker may stay silent before its attempt is lost.
func (e *Engine) Lease() time.Duration { return e.cfg.Lease }

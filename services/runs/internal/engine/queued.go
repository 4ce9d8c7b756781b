package engine

import (
	"context"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// queueEffects keeps the queues of workers over HTTP in step with a stored step of st: a
// generic attempt it dispatched goes to a claim of this replica waiting on its queue, if
// one waits, or to the store's queue; those of generic tasks that moved on (claimed,
// ended, retried) leave the store's. A write that fails has the run loaded again (owe),
// whose load dispatches what is ready again, and so queues it; an attempt handed to a
// claim that this replica then loses is dispatched again the same way.
func (e *Engine) queueEffects(st *domain.State, m *domain.Machine, dispatched []int) {
	if e.queues == nil {
		return
	}
	var put []domain.QueuedAttempt
	for _, i := range dispatched {
		if q, ok := st.QueuedOf(i, e.now()); ok && !e.queueWake.offer(q) {
			put = append(put, q)
		}
	}
	var gone []string
	for i, was := range m.Changed() {
		t := st.Tasks[i]
		if t.Type == tasktype.Generic && was == domain.Ready && t.Status != domain.Ready {
			if id := domain.AttemptID(t.ID, t.Attempt); !e.queueWake.handed(id) {
				gone = append(gone, id)
			}
		}
	}
	if len(put) == 0 && len(gone) == 0 {
		return
	}
	run := st.Run.ID
	e.spawn(func(ctx context.Context) {
		e.requeue(ctx, run, put)
		if err := e.queues.DeleteQueued(ctx, gone...); err != nil && ctx.Err() == nil {
			// A claim finds it gone from its task run and deletes it then.
			e.log.Warn("cannot take attempts out of their queue", "run", run, "error", err)
		}
	})
}

// requeue stores attempts of run in their queues; a write that fails has the run loaded
// again, which dispatches them again.
func (e *Engine) requeue(ctx context.Context, run string, qs []domain.QueuedAttempt) {
	if len(qs) == 0 {
		return
	}
	if err := e.queues.PutQueued(ctx, qs); err != nil {
		if ctx.Err() == nil {
			e.log.Warn("cannot queue attempts for workers", "run", run, "error", err)
			e.owe(run)
		}
		return
	}
	for _, q := range qs {
		e.queueWake.fire(q.Team, q.Queue)
	}
}

// Requeue puts q, handed to a claim that did not take it, in the store's queue.
func (e *Engine) Requeue(ctx context.Context, q domain.QueuedAttempt) {
	e.queueWake.forget(q.ID)
	e.requeue(ctx, q.Run, []domain.QueuedAttempt{q})
}

// AwaitQueued registers a claim waiting on queue of team: ch gives it an attempt this
// replica dispatches there, and woken is closed when an attempt is stored there (for
// another replica's claims, or one no claim here waited for). done unregisters the claim
// and answers an attempt handed to it that it did not take from ch, which the caller
// must Requeue.
func (e *Engine) AwaitQueued(team, queue string) (ch <-chan domain.QueuedAttempt, woken <-chan struct{}, done func() *domain.QueuedAttempt) {
	return e.queueWake.await(team, queue)
}

// queueSignals hands attempts to the claims waiting on a queue, and wakes them.
type queueSignals struct {
	mu      sync.Mutex
	waiters map[[2]string][]chan domain.QueuedAttempt
	ch      map[[2]string]chan struct{}
	// handedTo are the attempts handed to a claim here, not put in the store's queue:
	// their claim need not take them out of it. Bounded by maxHanded.
	handedTo map[string]bool
}

// maxHanded bounds the attempts remembered as handed to a claim; past it, they are
// forgotten, which costs a delete of what is not stored.
const maxHanded = 10_000

func (s *queueSignals) await(team, queue string) (<-chan domain.QueuedAttempt, <-chan struct{}, func() *domain.QueuedAttempt) {
	key := [2]string{team, queue}
	c := make(chan domain.QueuedAttempt, 1)
	s.mu.Lock()
	if s.waiters == nil {
		s.waiters, s.ch, s.handedTo = map[[2]string][]chan domain.QueuedAttempt{}, map[[2]string]chan struct{}{}, map[string]bool{}
	}
	s.waiters[key] = append(s.waiters[key], c)
	w, ok := s.ch[key]
	if !ok {
		w = make(chan struct{})
		s.ch[key] = w
	}
	s.mu.Unlock()
	return c, w, func() *domain.QueuedAttempt {
		s.mu.Lock()
		defer s.mu.Unlock()
		ws := s.waiters[key]
		for i, x := range ws {
			if x == c {
				s.waiters[key] = append(ws[:i:i], ws[i+1:]...)
				break
			}
		}
		if len(s.waiters[key]) == 0 {
			delete(s.waiters, key)
		}
		select {
		case q := <-c:
			return &q
		default:
			return nil
		}
	}
}

// offer hands q to the claim waiting longest on its queue; false when none waits.
func (s *queueSignals) offer(q domain.QueuedAttempt) bool {
	key := [2]string{q.Team, q.Queue}
	s.mu.Lock()
	defer s.mu.Unlock()
	ws := s.waiters[key]
	if len(ws) == 0 {
		return false
	}
	c := ws[0]
	s.waiters[key] = ws[1:]
	if len(s.waiters[key]) == 0 {
		delete(s.waiters, key)
	}
	c <- q // buffered, and handed one attempt at most: it left the waiters
	if len(s.handedTo) >= maxHanded {
		clear(s.handedTo)
	}
	s.handedTo[q.ID] = true
	return true
}

// handed reports whether attempt id was handed to a claim here rather than stored, and
// forgets it.
func (s *queueSignals) handed(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := s.handedTo[id]
	delete(s.handedTo, id)
	return ok
}

func (s *queueSignals) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.handedTo, id)
}

// fire wakes the claims waiting on queue of team: an attempt was stored there.
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

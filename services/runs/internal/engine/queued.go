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
// replica dispatches there, and woken is closed when an attempt is stored there (one no
// claim here waited for) or more may wait there than a claim took. done unregisters the
// claim and answers an attempt handed to it that it did not take from ch, which the caller
// must Requeue.
func (e *Engine) AwaitQueued(team, queue string) (ch <-chan domain.QueuedAttempt, woken <-chan struct{}, done func() *domain.QueuedAttempt) {
	return e.queueWake.await(team, queue)
}

// LookAtQueue reports whether the claim asking should read queue of team in the store:
// something was stored there since the last look, or no claim of this replica looked
// within every. One claim looks at a time; the others wait to be handed an attempt, or
// woken. A claim that looked and left more waiting calls QueueHasMore.
func (e *Engine) LookAtQueue(team, queue string, every time.Duration) bool {
	return e.queueWake.look(team, queue, e.now(), every)
}

// QueueHasMore wakes the claims waiting on queue of team to look at the store: a claim
// that looked left attempts there.
func (e *Engine) QueueHasMore(team, queue string) { e.queueWake.fire(team, queue) }

// queueSignals hands attempts to the claims waiting on a queue, and tells them when to
// read the store's queue, so that a replica reads each queue at most once per look
// however many claims wait on it.
type queueSignals struct {
	mu     sync.Mutex
	queues map[[2]string]*queueState
	// handedTo are the attempts handed to a claim here, not put in the store's queue:
	// their claim need not take them out of it. Bounded by maxHanded.
	handedTo map[string]bool
}

// queueState is what a replica knows of one queue.
type queueState struct {
	// waiters are the claims waiting, longest first, each to be handed one attempt.
	waiters []chan domain.QueuedAttempt
	// wake is closed when the store's queue is to be read again.
	wake chan struct{}
	// lookedAt is when a claim last read the store's queue; stored, that something was
	// stored there since.
	lookedAt time.Time
	stored   bool
}

// maxHanded bounds the attempts remembered as handed to a claim; past it, they are
// forgotten, which costs a delete of what is not stored.
const maxHanded = 10_000

// state answers the state of queue of team, made if need be; the caller holds s.mu.
func (s *queueSignals) state(team, queue string) *queueState {
	if s.queues == nil {
		s.queues, s.handedTo = map[[2]string]*queueState{}, map[string]bool{}
	}
	key := [2]string{team, queue}
	st, ok := s.queues[key]
	if !ok {
		st = &queueState{wake: make(chan struct{})}
		s.queues[key] = st
	}
	return st
}

func (s *queueSignals) await(team, queue string) (<-chan domain.QueuedAttempt, <-chan struct{}, func() *domain.QueuedAttempt) {
	key := [2]string{team, queue}
	c := make(chan domain.QueuedAttempt, 1)
	s.mu.Lock()
	st := s.state(team, queue)
	st.waiters = append(st.waiters, c)
	wake := st.wake
	s.mu.Unlock()
	return c, wake, func() *domain.QueuedAttempt {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, x := range st.waiters {
			if x == c {
				st.waiters = append(st.waiters[:i:i], st.waiters[i+1:]...)
				break
			}
		}
		if len(st.waiters) == 0 && !st.stored && s.queues[key] == st {
			// Nothing waits on it and nothing is known stored there: forgotten, so that
			// claims on queues of any name cannot grow the map; the next claim reads it.
			delete(s.queues, key)
		}
		select {
		case q := <-c:
			return &q
		default:
			return nil
		}
	}
}

func (s *queueSignals) look(team, queue string, now time.Time, every time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(team, queue)
	if !st.stored && now.Sub(st.lookedAt) < every {
		return false
	}
	st.stored, st.lookedAt = false, now
	return true
}

// offer hands q to the claim waiting longest on its queue; false when none waits.
func (s *queueSignals) offer(q domain.QueuedAttempt) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(q.Team, q.Queue)
	if len(st.waiters) == 0 {
		return false
	}
	c := st.waiters[0]
	st.waiters = st.waiters[1:]
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

// fire has the claims waiting on queue of team read the store's queue.
func (s *queueSignals) fire(team, queue string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state(team, queue)
	st.stored = true
	close(st.wake)
	st.wake = make(chan struct{})
}

// Lease is how long a runner or worker may stay silent before its attempt is lost.
func (e *Engine) Lease() time.Duration { return e.cfg.Lease }

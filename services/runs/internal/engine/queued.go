package engine

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Handoff is what a claim waiting on a queue is handed by a step of this replica that
// dispatched there: the attempt, and Claimed, the attempt as its worker gets it, when the
// step claimed it for the waiting worker in its own write (claimOnDispatch). An attempt
// handed unclaimed is the claim's to claim, or to give back (Requeue); one handed claimed
// is the worker's already, or its claim's to give back with a release.
type Handoff struct {
	Q       domain.QueuedAttempt
	Claimed *events.TaskAttempt
	// Stored is an attempt another claim read from the store's queue and handed on
	// (HandStored): it stays there until claimed.
	Stored bool
}

// dispatchClaim is a generic attempt a step claims for a waiting claim of this replica.
type dispatchClaim struct {
	task int
	q    domain.QueuedAttempt
	w    *waiter
}

// claimOnDispatch claims, in the step m is about to store, each generic attempt it
// dispatches on a queue that a claim of this replica waits on, for that claim's worker:
// the claim is then stored with the dispatch, one write instead of two, and nothing is
// queued in the store nor sent to the queue's topic. What it answers must be settled
// (settleClaims) whether or not the step is stored. A crash after the write leaves the
// attempt claimed by a worker that never got it: it is lost when its lease lapses, and
// tried again, as a worker killed with it would have it.
func (e *Engine) claimOnDispatch(m *domain.Machine) []dispatchClaim {
	if e.queues == nil {
		return nil
	}
	var claims []dispatchClaim
	for _, i := range m.Effects().Dispatch {
		q, ok := m.S.QueuedOf(i, m.Now)
		if !ok {
			continue
		}
		w := e.queueWake.reserve(q.Team, q.Queue)
		if w == nil {
			continue
		}
		if !m.Claim(i, q.Attempt, w.runner) {
			e.queueWake.settle(w, nil)
			continue
		}
		claims = append(claims, dispatchClaim{task: i, q: q, w: w})
	}
	return claims
}

// settleClaims hands each attempt claimed on dispatch to its claim once its step is
// stored, or, when it was not, lets the claims wait again.
func (e *Engine) settleClaims(st *domain.State, claims []dispatchClaim, stored bool) {
	for _, c := range claims {
		if !stored {
			e.queueWake.settle(c.w, nil)
			continue
		}
		att, err := WorkerAttempt(st, c.task, e.now())
		if err != nil {
			// Claimed and stored, yet not to be worked: its lease brings it back.
			e.log.Error("cannot hand a claimed attempt to its worker", "taskRun", st.Tasks[c.task].ID, "error", err)
			e.queueWake.settle(c.w, nil)
			continue
		}
		e.queueWake.settle(c.w, &Handoff{Q: c.q, Claimed: &att})
	}
}

// claimedOnDispatch reports whether task i is among claims.
func claimedOnDispatch(claims []dispatchClaim, i int) bool {
	return slices.ContainsFunc(claims, func(c dispatchClaim) bool { return c.task == i })
}

// queueEffects keeps the queues of workers over HTTP in step with a stored step of st: an
// attempt it claimed on dispatch goes to its claim; a generic attempt it dispatched goes
// to a claim of this replica waiting on its queue, if one waits, or to the store's queue;
// those of generic tasks that moved on (claimed, ended, retried) leave the store's. A
// write that fails has the run loaded again (owe), whose load dispatches what is ready
// again, and so queues it; an attempt handed to a claim that this replica then loses is
// dispatched again the same way.
func (e *Engine) queueEffects(st *domain.State, m *domain.Machine, dispatched []int, claims []dispatchClaim) {
	if e.queues == nil {
		return
	}
	e.settleClaims(st, claims, true)
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

// AwaitQueued registers a claim of runner waiting on queue of team: ch hands it an
// attempt this replica dispatches there (claimed for runner by the dispatching step when
// it could be), and woken is closed when an attempt is stored there (one no claim here
// waited for) or more may wait there than a claim took. done unregisters the claim and
// answers a handoff it did not take from ch, which the caller must give back: Requeue an
// unclaimed attempt, release a claimed one.
func (e *Engine) AwaitQueued(team, queue, runner string) (ch <-chan Handoff, woken <-chan struct{}, done func() *Handoff) {
	return e.queueWake.await(team, queue, runner)
}

// LookAtQueue reports whether the claim asking should read queue of team in the store:
// something was stored there since the last look, or no claim of this replica looked
// within every. One claim looks at a time; the others wait to be handed an attempt, or
// woken. A claim that looked and left more waiting calls QueueHasMore.
func (e *Engine) LookAtQueue(team, queue string, every time.Duration) bool {
	return e.queueWake.look(team, queue, e.now(), every)
}

// HandStored hands q, which a claim read from the store's queue with the attempt it took,
// to another claim of this replica waiting on its queue, so that the attempts one read
// found go to the claims waiting rather than each claim reading them again; false when
// none waits. q stays in the store's queue until claimed.
func (e *Engine) HandStored(q domain.QueuedAttempt) bool { return e.queueWake.offerStored(q) }

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
	waiters []*waiter
	// wake is closed when the store's queue is to be read again.
	wake chan struct{}
	// lookedAt is when a claim last read the store's queue; stored, that something was
	// stored there since.
	lookedAt time.Time
	stored   bool
}

// waiter is one claim waiting on a queue.
type waiter struct {
	ch          chan Handoff // handed one attempt at most
	team, queue string
	runner      string // what a claim for it records
	// settled is closed when a step that claimed an attempt for this claim (reserve)
	// settles it; nil when none is in flight.
	settled chan struct{}
	// left is set when the claim stopped waiting (done).
	left bool
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

func (s *queueSignals) await(team, queue, runner string) (<-chan Handoff, <-chan struct{}, func() *Handoff) {
	key := [2]string{team, queue}
	w := &waiter{ch: make(chan Handoff, 1), team: team, queue: queue, runner: runner}
	s.mu.Lock()
	st := s.state(team, queue)
	st.waiters = append(st.waiters, w)
	wake := st.wake
	s.mu.Unlock()
	return w.ch, wake, func() *Handoff {
		s.mu.Lock()
		defer s.mu.Unlock()
		w.left = true
		st.waiters = slices.DeleteFunc(st.waiters, func(x *waiter) bool { return x == w })
		// A step claiming an attempt for it settles within its write: what it claimed is
		// this claim's to take or give back.
		for w.settled != nil {
			settled := w.settled
			s.mu.Unlock()
			<-settled
			s.mu.Lock()
		}
		if len(st.waiters) == 0 && !st.stored && s.queues[key] == st {
			// Nothing waits on it and nothing is known stored there: forgotten, so that
			// claims on queues of any name cannot grow the map; the next claim reads it.
			delete(s.queues, key)
		}
		select {
		case h := <-w.ch:
			return &h
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

// take answers the claim waiting longest on queue of team, no longer waiting; nil when
// none waits. The caller holds s.mu.
func (s *queueSignals) take(team, queue string) *waiter {
	st := s.state(team, queue)
	if len(st.waiters) == 0 {
		return nil
	}
	w := st.waiters[0]
	st.waiters = st.waiters[1:]
	return w
}

// hand gives h to w; the caller holds s.mu.
func (s *queueSignals) hand(w *waiter, h Handoff) {
	w.ch <- h // buffered, and handed one attempt at most: it left the waiters
	if h.Claimed != nil || h.Stored {
		// Never stored, and moved on from ready in the step that stored it; or stored,
		// to be taken out of the store's queue by the step that claims it.
		return
	}
	if len(s.handedTo) >= maxHanded {
		clear(s.handedTo)
	}
	s.handedTo[h.Q.ID] = true
}

// offer hands q to the claim waiting longest on its queue; false when none waits.
func (s *queueSignals) offer(q domain.QueuedAttempt) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.take(q.Team, q.Queue)
	if w == nil {
		return false
	}
	s.hand(w, Handoff{Q: q})
	return true
}

// offerStored hands q, read from the store's queue, to the claim waiting longest on its
// queue; false when none waits.
func (s *queueSignals) offerStored(q domain.QueuedAttempt) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.take(q.Team, q.Queue)
	if w == nil {
		return false
	}
	s.hand(w, Handoff{Q: q, Stored: true})
	return true
}

// reserve takes the claim waiting longest on queue of team for a step about to claim an
// attempt for it; nil when none waits. The step must settle it.
func (s *queueSignals) reserve(team, queue string) *waiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.take(team, queue)
	if w != nil {
		w.settled = make(chan struct{})
	}
	return w
}

// settle ends the reservation of w: h is handed to it, or, when h is nil (nothing was
// claimed for it after all), it waits again, first in line, unless it left meanwhile.
func (s *queueSignals) settle(w *waiter, h *Handoff) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h != nil {
		s.hand(w, *h)
	} else if !w.left {
		st := s.state(w.team, w.queue)
		st.waiters = slices.Insert(st.waiters, 0, w)
	}
	close(w.settled)
	w.settled = nil
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

package app

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// SchedulerConfig tunes a scheduler replica; zero fields take the defaults named.
type SchedulerConfig struct {
	// Poll is how often the replica claims the schedules due soon (1s): a schedule saved
	// on another replica is seen within it.
	Poll time.Duration
	// Lookahead is how far ahead of their due times schedules are claimed (2s), so each
	// fires from a timer at its time rather than at the next poll.
	Lookahead time.Duration
	// Lease is how long a claim outlives its schedule's due time (15s): the longest a
	// replica that died delays its schedules' fires.
	Lease time.Duration
	// Batch bounds the schedules one poll claims (1,000).
	Batch int
	// Workers bounds the schedules worked on at once (32).
	Workers int
}

func (c SchedulerConfig) withDefaults() SchedulerConfig {
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.Lookahead <= 0 {
		c.Lookahead = 2 * time.Second
	}
	if c.Lease <= 0 {
		c.Lease = 15 * time.Second
	}
	if c.Batch <= 0 {
		c.Batch = 1000
	}
	if c.Workers <= 0 {
		c.Workers = 32
	}
	return c
}

// Scheduler is one replica's share of the firing: it claims the schedules due soon, keeps
// them on timers, and has the Firer work on each at its due time. Nothing it holds in
// memory is the truth: a replica that stops leaves its claims to lapse and be taken up.
type Scheduler struct {
	cfg   SchedulerConfig
	store Claims
	firer *Firer
	log   *slog.Logger
	now   func() time.Time
	// id makes this replica's claim tokens its own; seq each poll's.
	id  string
	seq atomic.Int64

	mu    sync.Mutex
	due   dueHeap
	held  map[string]bool
	wake  chan struct{}
	polls chan struct{}
}

// NewScheduler returns replica id's scheduler.
func NewScheduler(id string, cfg SchedulerConfig, store Claims, firer *Firer, log *slog.Logger) *Scheduler {
	if log == nil {
		log = slog.Default()
	}
	return &Scheduler{cfg: cfg.withDefaults(), store: store, firer: firer, log: log, now: firer.now, id: id,
		held: map[string]bool{}, wake: make(chan struct{}, 1), polls: make(chan struct{}, 1)}
}

// Poke asks for a poll now: a schedule was saved and may be due sooner than the next one.
func (s *Scheduler) Poke() {
	select {
	case s.polls <- struct{}{}:
	default:
	}
}

// Run works until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	work := make(chan claimed)
	var wg sync.WaitGroup
	for range s.cfg.Workers {
		wg.Go(func() {
			for c := range work {
				s.work(ctx, c)
			}
		})
	}
	defer func() {
		close(work)
		wg.Wait()
	}()
	poll := time.NewTimer(0)
	defer poll.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		// Hand out what is due, then sleep until the next due time, poll or wake-up.
		for {
			c, ok := s.popDue()
			if !ok {
				break
			}
			select {
			case work <- c:
			case <-ctx.Done():
				return nil
			}
		}
		timer.Reset(s.untilNext())
		select {
		case <-ctx.Done():
			return nil
		case <-poll.C:
			s.claim(ctx)
			poll.Reset(s.cfg.Poll)
		case <-s.polls:
			s.claim(ctx)
		case <-timer.C:
		case <-s.wake:
		}
	}
}

// claim takes the schedules due soon whose claims have lapsed.
func (s *Scheduler) claim(ctx context.Context) {
	now := s.now()
	token := fmt.Sprintf("%s/%d", s.id, s.seq.Add(1))
	got, err := s.store.ClaimDue(ctx, token, now.Add(s.cfg.Lookahead), now, now.Add(s.cfg.Lookahead+s.cfg.Lease), s.cfg.Batch)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("cannot claim the schedules due", "error", err)
		}
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sch := range got {
		if s.held[sch.ID] {
			continue // a claim of ours that lapsed while its work ran late; that work stores it
		}
		s.held[sch.ID] = true
		heap.Push(&s.due, claimed{sch: sch, token: token})
	}
}

func (s *Scheduler) work(ctx context.Context, c claimed) {
	sch, token := c.sch, c.token
	kept, err := s.firer.Work(ctx, sch, token, s.now().Add(s.cfg.Lookahead), s.cfg.Lease)
	if err != nil && !errors.Is(err, domain.ErrConflict) && ctx.Err() == nil {
		s.log.Warn("cannot store a schedule's fires; its claim lapses and it is worked on again", "schedule", sch.ID, "error", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || !kept {
		delete(s.held, sch.ID)
		return
	}
	heap.Push(&s.due, c)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// popDue answers the first claimed schedule due now, if any.
func (s *Scheduler) popDue() (claimed, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.due) == 0 || s.due[0].sch.Due().After(s.now()) {
		return claimed{}, false
	}
	return heap.Pop(&s.due).(claimed), true
}

// untilNext answers how long until the first claimed schedule is due (at most the poll).
func (s *Scheduler) untilNext() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.due) == 0 {
		return s.cfg.Poll
	}
	return min(s.due[0].sch.Due().Sub(s.now()), s.cfg.Poll)
}

// claimed is a schedule this replica holds, with the token of its claim.
type claimed struct {
	sch   *domain.Schedule
	token string
}

// dueHeap orders claimed schedules by due time.
type dueHeap []claimed

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].sch.Due().Before(h[j].sch.Due()) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(claimed)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

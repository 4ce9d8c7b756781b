package app_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// memStore is app.DeliveryStore in memory, with the conditions of the database's writes.
type memStore struct {
	mu       sync.Mutex
	queues   map[string]domain.Queue
	events   map[string]domain.Event
	failures []domain.Failure
	// postponed are the failed attempts recorded, in order.
	postponed []postponed
}

type postponed struct {
	queue   string
	attempt int
	due     time.Time
}

func newMemStore() *memStore {
	return &memStore{queues: map[string]domain.Queue{}, events: map[string]domain.Event{}}
}

var _ app.DeliveryStore = (*memStore)(nil)

func clone(q domain.Queue) *domain.Queue {
	q.Recent = slices.Clone(q.Recent)
	q.Inline = maps.Clone(q.Inline)
	return &q
}

func (s *memStore) FindQueue(_ context.Context, id string) (*domain.Queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.queues[id]
	if !ok {
		return nil, nil
	}
	return clone(q), nil
}

func (s *memStore) CreateQueue(_ context.Context, q *domain.Queue) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.queues[q.ID]; ok {
		return domain.ErrQueueChanged
	}
	q.Version = 1
	s.queues[q.ID] = *clone(*q)
	return nil
}

func (s *memStore) SaveRecorded(_ context.Context, q *domain.Queue, inline *domain.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.queues[q.ID]
	if !ok || cur.Version != q.Version {
		return domain.ErrQueueChanged
	}
	cur.Last, cur.Recent, cur.Version = q.Last, slices.Clone(q.Recent), q.Version+1
	if inline != nil {
		cur.Inline = maps.Clone(cur.Inline)
		if cur.Inline == nil {
			cur.Inline = map[int64]domain.Event{}
		}
		cur.Inline[inline.Seq] = *inline
	}
	s.queues[q.ID] = cur
	q.Version++
	return nil
}

func (s *memStore) PutEvent(_ context.Context, e domain.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := domain.EventKey(e.Queue, e.Gen, e.Seq)
	if _, ok := s.events[key]; !ok {
		s.events[key] = e
	}
	return nil
}

func (s *memStore) FindEvent(_ context.Context, queue, gen string, seq int64) (domain.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.events[domain.EventKey(queue, gen, seq)]
	if !ok {
		return domain.Event{}, domain.ErrEventMissing
	}
	return e, nil
}

func (s *memStore) DeleteEvent(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.events, key)
	return nil
}

func free(q domain.Queue, owner string, now time.Time) bool {
	return q.Owner == "" || q.Owner == owner || q.LeaseUntil.Before(now)
}

func (s *memStore) ClaimQueue(_ context.Context, id, owner string, now, until time.Time) (*domain.Queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.queues[id]
	if !ok || !free(q, owner, now) {
		return nil, domain.ErrQueueNotHeld
	}
	q.Owner, q.LeaseUntil = owner, until
	s.queues[id] = q
	return clone(q), nil
}

func (s *memStore) held(id, owner string) (domain.Queue, error) {
	q, ok := s.queues[id]
	if !ok || q.Owner != owner {
		return q, domain.ErrQueueNotHeld
	}
	return q, nil
}

func (s *memStore) AdvanceQueue(_ context.Context, id, owner string, seq int64, due, until time.Time) (*domain.Queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.held(id, owner)
	if err != nil || q.Next != seq {
		return nil, domain.ErrQueueNotHeld
	}
	q.Inline = maps.Clone(q.Inline)
	delete(q.Inline, seq)
	q.Next++
	q.Attempt, q.Due, q.LastError, q.LeaseUntil = 0, due, "", until
	s.queues[id] = q
	return clone(q), nil
}

func (s *memStore) PostponeQueue(_ context.Context, id, owner string, attempt int, due time.Time, lastError string, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, err := s.held(id, owner)
	if err != nil {
		return err
	}
	s.postponed = append(s.postponed, postponed{queue: id, attempt: attempt, due: due})
	q.Attempt, q.Due, q.LastError, q.LeaseUntil = attempt, due, lastError, until
	s.queues[id] = q
	return nil
}

func (s *memStore) DeleteQueue(_ context.Context, q *domain.Queue, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.queues[q.ID]
	if !ok || cur.Owner != owner || cur.Version != q.Version {
		return domain.ErrQueueChanged
	}
	delete(s.queues, q.ID)
	return nil
}

func (s *memStore) DropQueue(_ context.Context, id, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.held(id, owner); err != nil {
		return nil
	}
	delete(s.queues, id)
	for k, e := range s.events {
		if e.Queue == id {
			delete(s.events, k)
		}
	}
	return nil
}

func (s *memStore) ReleaseQueues(_ context.Context, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, q := range s.queues {
		if q.Owner == owner {
			q.Owner = ""
			s.queues[id] = q
		}
	}
	return nil
}

func (s *memStore) FindDueQueues(_ context.Context, owner string, now time.Time, limit int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, q := range s.queues {
		if !q.Due.After(now) && free(q, owner, now) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids[:min(len(ids), limit)], nil
}

func (s *memStore) AddFailure(_ context.Context, f domain.Failure) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, f)
	return nil
}

func (s *memStore) Purge(_ context.Context, failedBefore, staleBefore time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = slices.DeleteFunc(s.failures, func(f domain.Failure) bool { return f.GivenUp.Before(failedBefore) })
	for k, e := range s.events {
		if e.Recorded.Before(staleBefore) {
			delete(s.events, k)
		}
	}
	return nil
}

// size answers how many queues and events are stored.
func (s *memStore) size() (queues, events int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queues), len(s.events)
}

func (s *memStore) attempts() []postponed {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.postponed)
}

func (s *memStore) failed() []domain.Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.failures)
}

// sinks is app.Settings with a list of sinks a test changes.
type sinks struct {
	mu   sync.Mutex
	urls []string
}

func (s *sinks) set(urls ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.urls = urls
}

func (s *sinks) IntegrationSettings(context.Context) (identityapi.IntegrationSettings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return identityapi.IntegrationSettings{Sinks: slices.Clone(s.urls)}, nil
}

// sender is app.Sender that keeps what each sink got, in order, and answers as a test's
// function says (nil: 2xx).
type sender struct {
	mu     sync.Mutex
	got    map[string][]string
	tries  map[string]int
	answer func(ctx context.Context, sink, id string) error
}

func newSender(answer func(ctx context.Context, sink, id string) error) *sender {
	return &sender{got: map[string][]string{}, tries: map[string]int{}, answer: answer}
}

func (s *sender) Send(ctx context.Context, sink string, body []byte) error {
	e, err := events.Unmarshal(body)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.tries[sink+" "+e.ID()]++
	s.mu.Unlock()
	if s.answer != nil {
		if err := s.answer(ctx, sink, e.ID()); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got[sink] = append(s.got[sink], e.ID())
	return nil
}

// received answers the ids sink got, in order.
func (s *sender) received(sink string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got[sink])
}

// ofRun answers the ids of run's events sink got, in order (event ids start with the run).
func (s *sender) ofRun(sink, run string) []string {
	var out []string
	for _, id := range s.received(sink) {
		if strings.HasPrefix(id, run+"/") {
			out = append(out, id)
		}
	}
	return out
}

// statusEvent is a run's status event as the runs service publishes it, with id
// "<run>/<n>".
func statusEvent(run string, n int) event.Event {
	e, err := events.New(fmt.Sprintf("%s/%d", run, n), events.Source("runs"), events.TypeStatusWorkflowRun,
		"/workflowrun/"+run+"/status/running", events.WorkflowRun{ID: run, Status: "running", Phase: "running"})
	if err != nil {
		panic(err)
	}
	return e
}

var errDown = errors.New("the sink answered 503")

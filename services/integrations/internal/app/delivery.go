package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"go.opentelemetry.io/otel/metric"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// DeliveryStore keeps the delivery queues of (sink, run) pairs and their events
// (domain.Queue, domain.Event) and the events given up on.
type DeliveryStore interface {
	// FindQueue answers queue id, nil when there is none.
	FindQueue(ctx context.Context, id string) (*domain.Queue, error)
	// CreateQueue stores a new queue, its Inline events with it; domain.ErrQueueChanged
	// when one exists.
	CreateQueue(ctx context.Context, q *domain.Queue) error
	// SaveRecorded stores q's Last and Recent, and the event inline if not nil among its
	// Inline events, if q is still at the version it was read at, and moves q.Version;
	// domain.ErrQueueChanged otherwise.
	SaveRecorded(ctx context.Context, q *domain.Queue, inline *domain.Event) error
	// PutEvent stores a queued event; one already stored under its key is kept.
	PutEvent(ctx context.Context, e domain.Event) error
	// FindEvent answers event seq of queue's generation gen; domain.ErrEventMissing when
	// it is not stored.
	FindEvent(ctx context.Context, queue, gen string, seq int64) (domain.Event, error)
	// DeleteEvent deletes the record of an event (domain.EventKey).
	DeleteEvent(ctx context.Context, key string) error

	// ClaimQueue makes owner the holder of queue id until until, if it has no holder, its
	// holder's lease lapsed before now, or owner holds it already, and answers it;
	// domain.ErrQueueNotHeld otherwise (or when the queue is gone).
	ClaimQueue(ctx context.Context, id, owner string, now, until time.Time) (*domain.Queue, error)
	// AdvanceQueue moves owner's queue id past its event seq, its Next (delivered or
	// given up), dropping it from Inline, clears its attempts, makes it due at due (when
	// it is deleted if it stays empty) and keeps it until until; domain.ErrQueueNotHeld
	// when owner does not hold it or it is past seq already.
	AdvanceQueue(ctx context.Context, id, owner string, seq int64, due, until time.Time) (*domain.Queue, error)
	// PostponeQueue records a failed attempt at owner's queue id: attempts so far, when the
	// next is due, the error, and the lease until until.
	PostponeQueue(ctx context.Context, id, owner string, attempt int, due time.Time, lastError string, until time.Time) error
	// DeleteQueue deletes owner's queue q if nothing was recorded in it since it was read
	// (its version); domain.ErrQueueChanged otherwise.
	DeleteQueue(ctx context.Context, q *domain.Queue, owner string) error
	// DropQueue deletes owner's queue id and every event it holds.
	DropQueue(ctx context.Context, id, owner string) error
	// ReleaseQueues lets go of every queue owner holds, so that other replicas (or this
	// one started again) take them up without waiting for their leases.
	ReleaseQueues(ctx context.Context, owner string) error
	// FindDueQueues answers the ids of at most limit queues due at now that have no
	// holder, whose holder's lease lapsed, or that owner holds.
	FindDueQueues(ctx context.Context, owner string, now time.Time, limit int) ([]string, error)

	// AddFailure keeps an event given up on.
	AddFailure(ctx context.Context, f domain.Failure) error
	// Purge deletes the failures given up before failedBefore, and the event records
	// stored before staleBefore (left behind by a replica that stopped between delivering
	// an event and deleting it).
	Purge(ctx context.Context, failedBefore, staleBefore time.Time) error
}

// Sender delivers one CloudEvent to a sink. An error is a failed attempt, retried later.
type Sender interface {
	// Send posts the event, given in structured JSON, to sink and reports whether the sink
	// answered 2xx.
	Send(ctx context.Context, sink string, body []byte) error
}

// ErrMalformedEvent is a status event the deliveries cannot read: retrying cannot help.
var ErrMalformedEvent = errors.New("malformed status event")

// DeliveryConfig tunes the deliveries; zero fields take the defaults named.
type DeliveryConfig struct {
	// Workers bounds the queues worked at once (64), PerSink those of one sink (16), so a
	// slow sink cannot take every worker.
	Workers, PerSink int
	// SendTimeout bounds one attempt (10 s); a sink that has not answered by then failed.
	SendTimeout time.Duration
	// Lease is how long a replica holds a queue past its last write (30 s): how long a
	// replica that died delays its queues.
	Lease time.Duration
	// Poll is how often a replica looks for queues nobody works (1 s): those of a replica
	// that died, and wake-ups lost. New events wake the deliverer at once.
	Poll time.Duration
	// Retry is the schedule of attempts (domain.DefaultRetry).
	Retry domain.Retry
	// GapGrace is how long an event a queue counts but whose record is missing is waited
	// for before it is skipped (30 s): its recorder stopped between the two writes and its
	// redelivery, which stores it, is due within that.
	GapGrace time.Duration
	// Idle is how long a delivered queue is kept before it is deleted (1 s): the run's next
	// event, usually moments away, then finds it, which saves writes on the way to its sink.
	Idle time.Duration
	// KeepFailures is how long events given up on are kept (7 days).
	KeepFailures time.Duration
	// PurgeEvery is how often given-up events and stale records are purged (10 min).
	PurgeEvery time.Duration
}

func (c DeliveryConfig) withDefaults() DeliveryConfig {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if c.Workers <= 0 {
		c.Workers = 64
	}
	if c.PerSink <= 0 {
		c.PerSink = 16
	}
	c.PerSink = min(c.PerSink, c.Workers)
	def(&c.SendTimeout, 10*time.Second)
	def(&c.Lease, 30*time.Second)
	def(&c.Poll, time.Second)
	def(&c.Retry.First, domain.DefaultRetry.First)
	def(&c.Retry.Max, domain.DefaultRetry.Max)
	def(&c.Retry.GiveUpAfter, domain.DefaultRetry.GiveUpAfter)
	def(&c.GapGrace, 30*time.Second)
	def(&c.Idle, time.Second)
	c.Idle = min(c.Idle, c.Lease/2)
	def(&c.KeepFailures, 7*24*time.Hour)
	def(&c.PurgeEvery, 10*time.Minute)
	return c
}

// staleMargin is how long past GiveUpAfter an event record is kept before it is taken for
// one left behind: its last attempt comes at most Retry.Max after GiveUpAfter.
const staleMargin = time.Hour

// releaseTimeout bounds letting go of the queues at shutdown.
const releaseTimeout = 5 * time.Second

// DeliveryDeps are what Deliveries need.
type DeliveryDeps struct {
	Store    DeliveryStore
	Settings Settings
	Sender   Sender
	Log      *slog.Logger
	Now      func() time.Time
	// NewID names queue generations.
	NewID func() string
	// Owner names this replica in the queues it holds; unique per process.
	Owner string
	// Meter makes the deliveries' instruments (delivery_metrics.go); nil takes the global
	// provider.
	Meter metric.MeterProvider
}

// Deliveries delivers the runs' status events to the sinks of settings: Record queues an
// event for each sink (the broker's consumer calls it, and only it, so a sink that is down
// never slows the consumer), and Run delivers the queues this replica holds, each one
// event at a time, in order.
type Deliveries struct {
	cfg   DeliveryConfig
	store DeliveryStore
	set   Settings
	send  Sender
	log   *slog.Logger
	now   func() time.Time
	newID func() string
	owner string

	wake    chan string
	workers chan struct{}
	// deletes are the records of delivered events, deleted off the delivery path.
	deletes chan string

	mu sync.Mutex
	// active are the queues being worked, each marked when woken meanwhile.
	active  map[string]*activeQueue
	perSink map[string]chan struct{}
	timers  map[string]*time.Timer
	// missing is when each missing event was first found missing (see GapGrace).
	missing map[string]time.Time
	stopped bool

	// What this replica wrote lately, to spare reads: the queues it recorded in (as
	// written; a write on a stale one fails on its version and reads again) and the events
	// it recorded, by record key, until delivered. Both are bounded by maxRemembered.
	known  map[string]domain.Queue
	bodies map[string]recorded
	// holding are the queues this replica holds, as it last read or wrote them, with
	// their leases: a queue woken while its lease has long to run is worked from here,
	// without a claim. What a recorder of another replica added shows at the next claim.
	holding map[string]heldQueue
	// done are the events this replica recorded for every sink, by id, with the sinks they
	// were recorded for (sinksKey): an event sent again (the runs service sends what it
	// was not told is recorded, a whole run at times) is recorded once, without a read,
	// instead of in a new queue once its first one was delivered. Bounded by maxDone.
	done map[string]string

	metrics *deliveryMetrics
}

// maxDone bounds the events a replica remembers recording; past it, it forgets, which
// only costs recording again what comes again.
const maxDone = 100_000

type heldQueue struct {
	q     domain.Queue
	until time.Time
}

// recorded is an event this replica recorded, and whether it was stored apart from its
// queue.
type recorded struct {
	domain.Event
	apart bool
}

// maxRemembered bounds the queues and events a replica remembers.
const maxRemembered = 10000

type activeQueue struct{ woken bool }

// NewDeliveries returns the deliveries; Run works them.
func NewDeliveries(cfg DeliveryConfig, deps DeliveryDeps) *Deliveries {
	cfg = cfg.withDefaults()
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return &Deliveries{cfg: cfg, store: deps.Store, set: deps.Settings, send: deps.Sender, log: deps.Log,
		now: deps.Now, newID: deps.NewID, owner: deps.Owner,
		wake: make(chan string, 4096), workers: make(chan struct{}, cfg.Workers), deletes: make(chan string, 4096),
		active: map[string]*activeQueue{}, perSink: map[string]chan struct{}{}, timers: map[string]*time.Timer{},
		missing: map[string]time.Time{}, known: map[string]domain.Queue{}, bodies: map[string]recorded{},
		holding: map[string]heldQueue{}, done: map[string]string{}, metrics: newDeliveryMetrics(deps.Meter)}
}

// RunOf answers the run a status event is about: the run itself, a task run's run or an
// action's run. Other types answer "" (not delivered).
func RunOf(e event.Event) (string, error) {
	var run string
	var err error
	switch e.Type() {
	case events.TypeStatusWorkflowRun:
		var d events.WorkflowRun
		d, err = events.Decode[events.WorkflowRun](e)
		run = d.ID
	case events.TypeStatusTaskRun:
		var d events.TaskRun
		d, err = events.Decode[events.TaskRun](e)
		run = d.WorkflowRunRef
	case events.TypeStatusAction:
		var d events.Action
		d, err = events.Decode[events.Action](e)
		run = d.WorkflowRunRef
	default:
		return "", nil
	}
	if err == nil && run == "" {
		err = fmt.Errorf("%s event %q names no run", e.Type(), e.ID())
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrMalformedEvent, err)
	}
	return run, nil
}

// Record queues a status event for every sink of settings, behind the run's earlier
// events, and wakes the deliverer. An event recorded again is queued once (as long as its
// queue remembers it, domain.RecentIDs). With no sinks nothing is kept. Events of other
// types are ignored.
func (d *Deliveries) Record(ctx context.Context, e event.Event) error {
	// The sinks first: kept a moment, they cost nothing to read, and with none the event
	// is not decoded at all (every status event of every run comes here).
	st, err := d.set.IntegrationSettings(ctx)
	if err != nil {
		return fmt.Errorf("read the event sinks: %w", err)
	}
	if len(st.Sinks) == 0 {
		return nil
	}
	sinks := sinksKey(st.Sinks)
	if d.recordedBefore(e.ID(), sinks) {
		return nil
	}
	run, err := RunOf(e)
	if err != nil || run == "" {
		return err
	}
	body, err := events.Marshal(e)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformedEvent, err)
	}
	now := d.now()
	// Each sink's queue side by side: their writes share a command.
	errs := make([]error, len(st.Sinks))
	var wg sync.WaitGroup
	for i, sink := range st.Sinks {
		if slices.Contains(st.Sinks[:i], sink) {
			continue
		}
		wg.Go(func() {
			q, err := d.record(ctx, sink, run, e.ID(), body, now)
			if err != nil {
				errs[i] = fmt.Errorf("queue event %s for sink %s: %w", e.ID(), domain.SinkKey(sink), err)
				return
			}
			d.Wake(q)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	d.mu.Lock()
	if len(d.done) >= maxDone {
		clear(d.done)
	}
	d.done[e.ID()] = sinks
	d.mu.Unlock()
	return nil
}

// sinksKey names a set of sinks, as settings list them.
func sinksKey(sinks []string) string { return strings.Join(sinks, "\n") }

// recordedBefore reports whether this replica recorded event id for sinks already.
func (d *Deliveries) recordedBefore(id, sinks string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	got, ok := d.done[id]
	return ok && got == sinks
}

// record queues event id in sink's queue of run and answers the queue's id.
func (d *Deliveries) record(ctx context.Context, sink, run, id string, body []byte, now time.Time) (string, error) {
	qid := domain.QueueID(sink, run)
	q := d.remembered(qid)
	for {
		var err error
		if q == nil {
			if q, err = d.store.FindQueue(ctx, qid); err != nil {
				return "", err
			}
		}
		e := domain.Event{Queue: qid, Gen: "", EventID: id, Body: body, Recorded: now}
		var inline, apart bool
		switch {
		case q == nil:
			// Created held by this replica, which is about to deliver it: no claim.
			q = &domain.Queue{ID: qid, Sink: sink, Run: run, Gen: d.newID(), Next: 1, Owner: d.owner, LeaseUntil: now.Add(d.cfg.Lease)}
			e.Seq, e.Gen = q.Append(id), q.Gen
			q.Inline = map[int64]domain.Event{e.Seq: e}
			inline = true
			if err = d.store.CreateQueue(ctx, q); err == nil {
				d.hold(q, q.LeaseUntil)
			}
		default:
			var known bool
			e.Gen = q.Gen
			if e.Seq, known = q.SeqOf(id); known {
				// Recorded before (a redelivery): the record apart may be what is missing.
				_, inline = q.Inline[e.Seq]
				apart = !inline && e.Seq >= q.Next
				break
			}
			inline = q.Inlines()
			apart = !inline
			e.Seq = q.Append(id)
			if inline {
				err = d.store.SaveRecorded(ctx, q, &e)
			} else {
				err = d.store.SaveRecorded(ctx, q, nil)
			}
		}
		if errors.Is(err, domain.ErrQueueChanged) {
			d.forget(qid)
			q = nil
			continue
		}
		if err != nil {
			d.forget(qid)
			return "", err
		}
		d.remember(q)
		var held *domain.Event
		if inline {
			held = &e
		}
		d.recordedInto(q, held)
		if apart {
			// Stored after the queue counts it: a deliverer that reads the count first
			// waits for the record (GapGrace), and a recorder stopped in between stores it
			// when the broker hands it the event again, with the same Seq (from Recent).
			if err := d.store.PutEvent(ctx, e); err != nil {
				return "", err
			}
		}
		d.mu.Lock()
		if len(d.bodies) >= maxRemembered {
			// Events another replica delivered stay here; start afresh.
			clear(d.bodies)
		}
		d.bodies[domain.EventKey(qid, q.Gen, e.Seq)] = recorded{Event: e, apart: apart || !inline}
		d.mu.Unlock()
		return qid, nil
	}
}

// remembered answers a copy of queue id as this replica last wrote it, nil if it does
// not remember it.
func (d *Deliveries) remembered(id string) *domain.Queue {
	d.mu.Lock()
	defer d.mu.Unlock()
	q, ok := d.known[id]
	if !ok {
		return nil
	}
	q.Recent = slices.Clone(q.Recent)
	return &q
}

func (d *Deliveries) remember(q *domain.Queue) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.known[q.ID]; !ok && len(d.known) >= maxRemembered {
		// Queues another replica deleted stay here; start afresh.
		clear(d.known)
	}
	c := *q
	c.Recent = slices.Clone(q.Recent)
	// What a recorder needs is Gen, Last, Recent and Version; the events it holds change
	// with every delivery.
	c.Inline = nil
	d.known[q.ID] = c
}

func (d *Deliveries) forget(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.known, id)
}

// Wake asks for queue id to be worked now. It never blocks: a wake-up that does not fit
// is left to the next poll.
func (d *Deliveries) Wake(id string) {
	select {
	case d.wake <- id:
	default:
	}
}

// Run delivers until ctx ends: the queues it is woken for, those due at each poll, and
// their retries at their due times.
func (d *Deliveries) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer func() {
		d.mu.Lock()
		d.stopped = true
		for _, t := range d.timers {
			t.Stop()
		}
		d.mu.Unlock()
		wg.Wait()
		release, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		if err := d.store.ReleaseQueues(release, d.owner); err != nil {
			d.log.Warn("cannot let go of the delivery queues; they are taken up when their leases lapse", "error", err)
		}
	}()
	deleter, stopDeleter := context.WithCancel(context.WithoutCancel(ctx))
	wg.Go(func() { d.deleteDelivered(deleter) })
	defer stopDeleter()
	poll := time.NewTimer(0)
	defer poll.Stop()
	purge := time.NewTicker(d.cfg.PurgeEvery)
	defer purge.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case id := <-d.wake:
			d.start(ctx, &wg, id)
		case <-poll.C:
			ids, err := d.store.FindDueQueues(ctx, d.owner, d.now(), 4*d.cfg.Workers)
			if err != nil && ctx.Err() == nil {
				d.log.Warn("cannot find the delivery queues due", "error", err)
			}
			for _, id := range ids {
				d.start(ctx, &wg, id)
			}
			poll.Reset(d.cfg.Poll)
		case <-purge.C:
			now := d.now()
			if err := d.store.Purge(ctx, now.Add(-d.cfg.KeepFailures), now.Add(-d.cfg.Retry.GiveUpAfter-staleMargin)); err != nil && ctx.Err() == nil {
				d.log.Warn("cannot purge the delivery records", "error", err)
			}
		}
	}
}

// start works queue id unless it is being worked, in which case that work goes on once
// more when it is done.
func (d *Deliveries) start(ctx context.Context, wg *sync.WaitGroup, id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if a, ok := d.active[id]; ok {
		a.woken = true
		return
	}
	d.active[id] = &activeQueue{}
	sink := domain.SinkKeyOf(id)
	slots, ok := d.perSink[sink]
	if !ok {
		slots = make(chan struct{}, d.cfg.PerSink)
		d.perSink[sink] = slots
	}
	wg.Go(func() { d.work(ctx, id, slots) })
}

func (d *Deliveries) work(ctx context.Context, id string, slots chan struct{}) {
	if acquire(ctx, slots) {
		if acquire(ctx, d.workers) {
			for {
				d.deliver(ctx, id)
				d.mu.Lock()
				again := d.active[id].woken && ctx.Err() == nil
				d.active[id].woken = false
				d.mu.Unlock()
				if !again {
					break
				}
			}
			<-d.workers
		}
		<-slots
	}
	d.mu.Lock()
	delete(d.active, id)
	d.mu.Unlock()
}

func acquire(ctx context.Context, slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// deliver works queue id while this replica holds it and it has an event to deliver now.
func (d *Deliveries) deliver(ctx context.Context, id string) {
	now := d.now()
	q, ok := d.held(id, now)
	if !ok {
		var err error
		if q, err = d.claim(ctx, id, now); err != nil {
			if !errors.Is(err, domain.ErrQueueNotHeld) {
				d.failed(ctx, id, "cannot claim a delivery queue", err)
			}
			return // another replica works it, or it was delivered and deleted
		}
	}
	for ctx.Err() == nil {
		now = d.now()
		// A queue with events is due when its retry is (Attempt > 0); an empty one when
		// it has been idle long enough to delete.
		if q.Due.After(now) && (q.Attempt > 0 || q.Empty()) {
			d.after(id, q.Due.Sub(now))
			return
		}
		if q.Empty() {
			err := d.store.DeleteQueue(ctx, q, d.owner)
			if !errors.Is(err, domain.ErrQueueChanged) {
				d.unhold(id)
				if err != nil {
					d.failed(ctx, id, "cannot delete a delivered queue", err)
				} else {
					d.forget(id)
				}
				return
			}
			// An event was recorded meanwhile.
			if q, err = d.claim(ctx, id, now); err != nil {
				return
			}
			continue
		}
		var err error
		if q, err = d.deliverNext(ctx, q); err != nil || q == nil {
			if err != nil {
				d.failed(ctx, id, "cannot store a delivery", err)
			}
			return
		}
	}
}

// claim claims queue id from the store and holds it.
func (d *Deliveries) claim(ctx context.Context, id string, now time.Time) (*domain.Queue, error) {
	until := now.Add(d.cfg.Lease)
	q, err := d.store.ClaimQueue(ctx, id, d.owner, now, until)
	if err != nil {
		d.unhold(id)
		return nil, err
	}
	d.hold(q, until)
	return q, nil
}

// held answers a copy of queue id as this replica holds it, if its lease has more than
// half of its life to run.
func (d *Deliveries) held(id string, now time.Time) (*domain.Queue, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	h, ok := d.holding[id]
	if !ok || h.until.Sub(now) < d.cfg.Lease/2 {
		return nil, false
	}
	q := h.q
	q.Recent, q.Inline = slices.Clone(q.Recent), maps.Clone(q.Inline)
	return &q, true
}

// hold keeps q, just read from or written to the store, as held until until; what this
// replica recorded in it since (a later version) is kept.
func (d *Deliveries) hold(q *domain.Queue, until time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := *q
	c.Recent, c.Inline = slices.Clone(q.Recent), maps.Clone(q.Inline)
	if h, ok := d.holding[q.ID]; ok && h.q.Gen == c.Gen && h.q.Version > c.Version {
		c.Last, c.Recent, c.Version = h.q.Last, h.q.Recent, h.q.Version
		for seq, e := range h.q.Inline {
			if _, ok := c.Inline[seq]; !ok && seq >= c.Next {
				if c.Inline == nil {
					c.Inline = map[int64]domain.Event{}
				}
				c.Inline[seq] = e
			}
		}
	}
	if _, ok := d.holding[q.ID]; !ok && len(d.holding) >= maxRemembered {
		// Queues taken over by another replica stay here; their leases have lapsed.
		maps.DeleteFunc(d.holding, func(_ string, h heldQueue) bool { return h.until.Before(d.now()) })
	}
	d.holding[q.ID] = heldQueue{q: c, until: until}
}

func (d *Deliveries) unhold(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.holding, id)
}

// recordedInto updates the queue held, if any, with what a recorder of this replica just
// wrote in q: an event, kept in the queue when held is not nil.
func (d *Deliveries) recordedInto(q *domain.Queue, held *domain.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	h, ok := d.holding[q.ID]
	if !ok {
		return
	}
	if h.q.Gen != q.Gen {
		delete(d.holding, q.ID)
		return
	}
	if q.Version != h.q.Version+1 {
		// Another replica recorded in between: what it wrote is read at the next claim.
		if q.Version > h.q.Version {
			delete(d.holding, q.ID)
		}
		return
	}
	h.q.Last, h.q.Recent, h.q.Version = q.Last, slices.Clone(q.Recent), q.Version
	if held != nil {
		h.q.Inline = maps.Clone(h.q.Inline)
		if h.q.Inline == nil {
			h.q.Inline = map[int64]domain.Event{}
		}
		h.q.Inline[held.Seq] = *held
	}
	d.holding[q.ID] = h
}

// deliverNext tries q's event Next once and answers the queue after it, or nil when the
// queue is to be worked again later (retried, waiting, dropped).
func (d *Deliveries) deliverNext(ctx context.Context, q *domain.Queue) (*domain.Queue, error) {
	st, err := d.set.IntegrationSettings(ctx)
	if err != nil {
		// Not the sink's fault: no attempt is counted.
		d.failed(ctx, q.ID, "cannot read the event sinks", err)
		return nil, nil
	}
	if !slices.Contains(st.Sinks, q.Sink) {
		// The sink was removed from settings: what it was owed goes with it.
		d.log.Info("dropping the events of a sink no longer in settings", "sink", domain.SinkKey(q.Sink), "run", q.Run)
		d.forget(q.ID)
		d.unhold(q.ID)
		return nil, d.store.DropQueue(ctx, q.ID, d.owner)
	}
	key := domain.EventKey(q.ID, q.Gen, q.Next)
	d.mu.Lock()
	mem, ok := d.bodies[key]
	d.mu.Unlock()
	ev, apart := mem.Event, mem.apart
	if !ok {
		ev, ok = q.Inline[q.Next]
	}
	if !ok {
		apart = true
		ev, err = d.store.FindEvent(ctx, q.ID, q.Gen, q.Next)
		if errors.Is(err, domain.ErrEventMissing) {
			return d.missingEvent(ctx, q, key)
		}
		if err != nil {
			return nil, err
		}
	}
	sendCtx, cancel := context.WithTimeout(ctx, d.cfg.SendTimeout)
	err = d.send.Send(sendCtx, q.Sink, ev.Body)
	cancel()
	if ctx.Err() != nil {
		return nil, nil // stopping: the attempt is not counted, the lease lapses
	}
	now := d.now()
	outcome := DeliveryDelivered
	if err != nil {
		attempt := q.Attempt + 1
		if !d.cfg.Retry.GivesUp(ev.Recorded, now) {
			due := now.Add(d.cfg.Retry.Backoff(attempt))
			// Worked again from the store: a retry is rare, and its state is there.
			d.unhold(q.ID)
			if err := d.store.PostponeQueue(ctx, q.ID, d.owner, attempt, due, errText(err), due.Add(d.cfg.Lease)); err != nil {
				return nil, err
			}
			d.metrics.attempted(DeliveryRetried, ev.Recorded, now)
			d.after(q.ID, due.Sub(now))
			return nil, nil
		}
		outcome = DeliveryGivenUp
		d.log.Warn("giving up delivering a status event", "sink", domain.SinkKey(q.Sink), "run", q.Run,
			"event_id", ev.EventID, "attempts", attempt, "error", errText(err))
		if err := d.store.AddFailure(ctx, domain.Failure{ID: key, Sink: q.Sink, Run: q.Run, EventID: ev.EventID, Body: ev.Body,
			Attempts: attempt, Reason: errText(err), Recorded: ev.Recorded, GivenUp: now}); err != nil {
			return nil, err
		}
	}
	next, err := d.advance(ctx, q, key, apart)
	if err == nil && next != nil {
		// Counted once the queue moved past the event: a queue lost to another replica
		// before that has it delivered again there, and counted there.
		d.metrics.attempted(outcome, ev.Recorded, now)
	}
	return next, err
}

// missingEvent waits for an event q counts but whose record is not there, and skips it
// after GapGrace.
func (d *Deliveries) missingEvent(ctx context.Context, q *domain.Queue, key string) (*domain.Queue, error) {
	now := d.now()
	d.mu.Lock()
	since, seen := d.missing[key]
	if !seen {
		d.missing[key] = now
		since = now
	}
	d.mu.Unlock()
	// Read again from the store next time: the event may be held by the queue there.
	d.unhold(q.ID)
	if now.Sub(since) < d.cfg.GapGrace {
		// Its recorder wakes the queue once it is stored; the timer covers a recorder
		// that stopped.
		d.after(q.ID, min(d.cfg.Poll, d.cfg.GapGrace))
		return nil, nil
	}
	d.log.Warn("skipping a status event whose record never came", "sink", domain.SinkKey(q.Sink), "run", q.Run, "seq", q.Next)
	return d.advance(ctx, q, key, false)
}

// advance moves q past its event Next, then deletes that event's record when it was
// stored apart.
func (d *Deliveries) advance(ctx context.Context, q *domain.Queue, key string, apart bool) (*domain.Queue, error) {
	now := d.now()
	until := now.Add(d.cfg.Lease)
	next, err := d.store.AdvanceQueue(ctx, q.ID, d.owner, q.Next, now.Add(d.cfg.Idle), until)
	if errors.Is(err, domain.ErrQueueNotHeld) {
		d.unhold(q.ID)
		return nil, nil // lost to another replica after the lease lapsed
	}
	if err != nil {
		d.unhold(q.ID)
		return nil, err
	}
	d.hold(next, until)
	if h, ok := d.held(q.ID, now); ok {
		next = h // with what was recorded meanwhile
	}
	d.mu.Lock()
	delete(d.missing, key)
	delete(d.bodies, key)
	if k, ok := d.known[q.ID]; ok && k.Gen == next.Gen {
		// The recorder holds events inline while few wait (domain.Queue.Inlines).
		k.Next = next.Next
		d.known[q.ID] = k
	}
	d.mu.Unlock()
	if !apart {
		return next, nil
	}
	// Deleted after the queue moved on, and off the delivery path: a record left by a stop
	// in between is purged later, whereas a queue that did not move would deliver its
	// event again.
	select {
	case d.deletes <- key:
	default:
		d.deleteEvent(ctx, key)
	}
	return next, nil
}

// deleteDelivered deletes the records of delivered events until ctx ends, then those
// still waiting, for a moment.
func (d *Deliveries) deleteDelivered(ctx context.Context) {
	for {
		select {
		case key := <-d.deletes:
			d.deleteEvent(ctx, key)
		case <-ctx.Done():
			drain, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
			defer cancel()
			for {
				select {
				case key := <-d.deletes:
					d.deleteEvent(drain, key)
				default:
					return
				}
			}
		}
	}
}

func (d *Deliveries) deleteEvent(ctx context.Context, key string) {
	if err := d.store.DeleteEvent(ctx, key); err != nil && ctx.Err() == nil {
		d.log.Warn("cannot delete a delivered event; it is purged later", "error", err)
	}
}

// after wakes queue id in wait.
func (d *Deliveries) after(id string, wait time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	if t, ok := d.timers[id]; ok {
		t.Stop()
	}
	d.timers[id] = time.AfterFunc(wait, func() {
		d.mu.Lock()
		delete(d.timers, id)
		d.mu.Unlock()
		d.Wake(id)
	})
}

// failed logs a store or settings error and tries the queue again after a poll.
func (d *Deliveries) failed(ctx context.Context, id, msg string, err error) {
	if ctx.Err() != nil {
		return
	}
	// A queue's id names its sink by digest, never by URL (which may carry a token).
	d.log.Warn(msg, "queue", id, "error", err)
	d.unhold(id)
	d.after(id, d.cfg.Poll)
}

// errText is an attempt's error as kept: bounded, one line.
func errText(err error) string {
	s := strings.ReplaceAll(err.Error(), "\n", " ")
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

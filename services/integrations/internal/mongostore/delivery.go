// Package mongostore keeps the integrations service's records in MongoDB.
package mongostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// Deliveries is app.DeliveryStore on a database: the queues (sinkqueues), the events they
// hold (sinkevents) and the events given up on (sinkfailures).
//
// Every read and write of the delivery path names one document by its id (a queue, or an
// event by domain.EventKey), which the embedded database answers by lookup: only the poll
// for queues nobody works and the purge filter on other fields. Queues are deleted once
// delivered and events once sent, so what is stored stays what is owed.
type Deliveries struct {
	queues, events, failures *mongo.Collection
}

var _ app.DeliveryStore = (*Deliveries)(nil)

// NewDeliveries returns the delivery records of db.
func NewDeliveries(db *mongo.Database) *Deliveries {
	return &Deliveries{queues: db.Collection("sinkqueues"), events: db.Collection("sinkevents"), failures: db.Collection("sinkfailures")}
}

// EnsureIndexes creates the indexes of the poll and the purge. (FerretDB refuses TTL
// indexes; Purge does their work.)
func (s *Deliveries) EnsureIndexes(ctx context.Context) error {
	if err := mongox.EnsureIndexes(ctx, s.queues, mongo.IndexModel{Keys: bson.D{{Key: "due", Value: 1}}}); err != nil {
		return err
	}
	if err := mongox.EnsureIndexes(ctx, s.events,
		mongo.IndexModel{Keys: bson.D{{Key: "queue", Value: 1}}},
		mongo.IndexModel{Keys: bson.D{{Key: "recorded", Value: 1}}}); err != nil {
		return err
	}
	return mongox.EnsureIndexes(ctx, s.failures, mongo.IndexModel{Keys: bson.D{{Key: "givenUp", Value: 1}}})
}

type queueDoc struct {
	ID         string      `bson:"_id"`
	Sink       string      `bson:"sink"`
	Run        string      `bson:"run"`
	Gen        string      `bson:"gen"`
	Last       int64       `bson:"last"`
	Next       int64       `bson:"next"`
	Recent     []recentDoc `bson:"recent"`
	Attempt    int         `bson:"attempt"`
	Due        time.Time   `bson:"due"`
	LastError  string      `bson:"lastError,omitempty"`
	Owner      string      `bson:"owner"`
	LeaseUntil time.Time   `bson:"leaseUntil"`
	Version    int64       `bson:"version"`
	// Inline are the events the queue holds, by inlineKey of their Seq. (Not named
	// "inline": the driver reads that as its inline option.)
	Inline map[string]inlineDoc `bson:"held,omitempty"`
}

// inlineDoc is an event a queue holds itself.
type inlineDoc struct {
	EventID  string    `bson:"eventId"`
	Body     string    `bson:"body"`
	Recorded time.Time `bson:"recorded"`
}

// inlineKey is the field of Inline holding event seq: a name, not a number, which a
// dotted path would take for an array index.
func inlineKey(seq int64) string { return "s" + strconv.FormatInt(seq, 10) }

type recentDoc struct {
	ID  string `bson:"id"`
	Seq int64  `bson:"seq"`
}

type eventDoc struct {
	ID       string    `bson:"_id"`
	Queue    string    `bson:"queue"`
	EventID  string    `bson:"eventId"`
	Body     string    `bson:"body"`
	Recorded time.Time `bson:"recorded"`
}

type failureDoc struct {
	ID       string    `bson:"_id"`
	Sink     string    `bson:"sink"`
	Run      string    `bson:"run"`
	EventID  string    `bson:"eventId"`
	Body     string    `bson:"body"`
	Attempts int       `bson:"attempts"`
	Reason   string    `bson:"reason"`
	Recorded time.Time `bson:"recorded"`
	GivenUp  time.Time `bson:"givenUp"`
}

func toQueueDoc(q *domain.Queue) queueDoc {
	recent := make([]recentDoc, len(q.Recent))
	for i, r := range q.Recent {
		recent[i] = recentDoc{ID: r.EventID, Seq: r.Seq}
	}
	d := queueDoc{ID: q.ID, Sink: q.Sink, Run: q.Run, Gen: q.Gen, Last: q.Last, Next: q.Next, Recent: recent,
		Attempt: q.Attempt, Due: q.Due, LastError: q.LastError, Owner: q.Owner, LeaseUntil: q.LeaseUntil, Version: q.Version}
	if len(q.Inline) > 0 {
		d.Inline = map[string]inlineDoc{}
		for seq, e := range q.Inline {
			d.Inline[inlineKey(seq)] = toInline(e)
		}
	}
	return d
}

func toInline(e domain.Event) inlineDoc {
	return inlineDoc{EventID: e.EventID, Body: string(e.Body), Recorded: e.Recorded}
}

func (d queueDoc) queue() *domain.Queue {
	recent := make([]domain.Recorded, len(d.Recent))
	for i, r := range d.Recent {
		recent[i] = domain.Recorded{EventID: r.ID, Seq: r.Seq}
	}
	q := &domain.Queue{ID: d.ID, Sink: d.Sink, Run: d.Run, Gen: d.Gen, Last: d.Last, Next: d.Next, Recent: recent,
		Attempt: d.Attempt, Due: d.Due.UTC(), LastError: d.LastError, Owner: d.Owner, LeaseUntil: d.LeaseUntil.UTC(), Version: d.Version}
	for k, e := range d.Inline {
		seq, err := strconv.ParseInt(strings.TrimPrefix(k, "s"), 10, 64)
		if err != nil {
			continue // not one of ours
		}
		if q.Inline == nil {
			q.Inline = map[int64]domain.Event{}
		}
		q.Inline[seq] = domain.Event{Queue: d.ID, Gen: d.Gen, Seq: seq, EventID: e.EventID, Body: []byte(e.Body), Recorded: e.Recorded.UTC()}
	}
	return q
}

// FindQueue answers queue id, nil when there is none.
func (s *Deliveries) FindQueue(ctx context.Context, id string) (*domain.Queue, error) {
	d, err := mongox.FindOne[queueDoc](ctx, s.queues, bson.M{"_id": id})
	if errors.Is(err, mongox.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find delivery queue %s: %w", id, err)
	}
	return d.queue(), nil
}

// CreateQueue stores a new queue at version 1, due at once.
func (s *Deliveries) CreateQueue(ctx context.Context, q *domain.Queue) error {
	q.Version = 1
	d := toQueueDoc(q)
	if _, err := s.queues.InsertOne(ctx, d); err != nil {
		if mongox.IsDuplicateKey(err) {
			return fmt.Errorf("create delivery queue %s: %w", q.ID, domain.ErrQueueChanged)
		}
		return fmt.Errorf("create delivery queue %s: %w", q.ID, err)
	}
	return nil
}

// SaveRecorded stores q's Last and Recent, and inline among its events, at the version q
// was read at.
func (s *Deliveries) SaveRecorded(ctx context.Context, q *domain.Queue, inline *domain.Event) error {
	d := toQueueDoc(q)
	set := bson.M{"last": d.Last, "recent": d.Recent, "version": q.Version + 1}
	if inline != nil {
		set["held."+inlineKey(inline.Seq)] = toInline(*inline)
	}
	res, err := s.queues.UpdateOne(ctx, bson.M{"_id": q.ID, "version": q.Version}, bson.M{"$set": set})
	if err != nil {
		return fmt.Errorf("record in delivery queue %s: %w", q.ID, err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("record in delivery queue %s: %w", q.ID, domain.ErrQueueChanged)
	}
	q.Version++
	return nil
}

// PutEvent stores a queued event, keeping one already stored under its key.
func (s *Deliveries) PutEvent(ctx context.Context, e domain.Event) error {
	key := domain.EventKey(e.Queue, e.Gen, e.Seq)
	_, err := s.events.InsertOne(ctx, eventDoc{ID: key, Queue: e.Queue, EventID: e.EventID, Body: string(e.Body), Recorded: e.Recorded})
	if err != nil && !mongox.IsDuplicateKey(err) {
		return fmt.Errorf("store queued event %s: %w", key, err)
	}
	return nil
}

// FindEvent answers event seq of queue's generation gen.
func (s *Deliveries) FindEvent(ctx context.Context, queue, gen string, seq int64) (domain.Event, error) {
	key := domain.EventKey(queue, gen, seq)
	d, err := mongox.FindOne[eventDoc](ctx, s.events, bson.M{"_id": key})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Event{}, fmt.Errorf("queued event %s: %w", key, domain.ErrEventMissing)
	}
	if err != nil {
		return domain.Event{}, fmt.Errorf("find queued event %s: %w", key, err)
	}
	return domain.Event{Queue: d.Queue, Gen: gen, Seq: seq, EventID: d.EventID, Body: []byte(d.Body), Recorded: d.Recorded.UTC()}, nil
}

// DeleteEvent deletes the record of an event.
func (s *Deliveries) DeleteEvent(ctx context.Context, key string) error {
	if _, err := s.events.DeleteOne(ctx, bson.M{"_id": key}); err != nil {
		return fmt.Errorf("delete queued event %s: %w", key, err)
	}
	return nil
}

// free selects the queues owner may hold at now.
func free(owner string, now time.Time) bson.A {
	return bson.A{bson.M{"owner": ""}, bson.M{"owner": owner}, bson.M{"leaseUntil": bson.M{"$lt": now}}}
}

// ClaimQueue makes owner the holder of queue id until until, when it is free.
func (s *Deliveries) ClaimQueue(ctx context.Context, id, owner string, now, until time.Time) (*domain.Queue, error) {
	return s.updateHeld(ctx, bson.M{"_id": id, "$or": free(owner, now)},
		bson.M{"$set": bson.M{"owner": owner, "leaseUntil": until}}, "claim delivery queue "+id)
}

// AdvanceQueue moves owner's queue id past its event seq.
func (s *Deliveries) AdvanceQueue(ctx context.Context, id, owner string, seq int64, due, until time.Time) (*domain.Queue, error) {
	return s.updateHeld(ctx, bson.M{"_id": id, "owner": owner, "next": seq},
		bson.M{"$inc": bson.M{"next": 1}, "$unset": bson.M{"held." + inlineKey(seq): ""},
			"$set": bson.M{"attempt": 0, "due": due, "lastError": "", "leaseUntil": until}},
		"advance delivery queue "+id)
}

func (s *Deliveries) updateHeld(ctx context.Context, filter, update bson.M, what string) (*domain.Queue, error) {
	var d queueDoc
	err := s.queues.FindOneAndUpdate(ctx, filter, update, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, fmt.Errorf("%s: %w", what, domain.ErrQueueNotHeld)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return d.queue(), nil
}

// PostponeQueue records a failed attempt at owner's queue id.
func (s *Deliveries) PostponeQueue(ctx context.Context, id, owner string, attempt int, due time.Time, lastError string, until time.Time) error {
	res, err := s.queues.UpdateOne(ctx, bson.M{"_id": id, "owner": owner},
		bson.M{"$set": bson.M{"attempt": attempt, "due": due, "lastError": lastError, "leaseUntil": until}})
	if err != nil {
		return fmt.Errorf("postpone delivery queue %s: %w", id, err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("postpone delivery queue %s: %w", id, domain.ErrQueueNotHeld)
	}
	return nil
}

// DeleteQueue deletes owner's queue q if still at q's version.
func (s *Deliveries) DeleteQueue(ctx context.Context, q *domain.Queue, owner string) error {
	res, err := s.queues.DeleteOne(ctx, bson.M{"_id": q.ID, "owner": owner, "version": q.Version})
	if err != nil {
		return fmt.Errorf("delete delivery queue %s: %w", q.ID, err)
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("delete delivery queue %s: %w", q.ID, domain.ErrQueueChanged)
	}
	return nil
}

// DropQueue deletes owner's queue id and its events.
func (s *Deliveries) DropQueue(ctx context.Context, id, owner string) error {
	res, err := s.queues.DeleteOne(ctx, bson.M{"_id": id, "owner": owner})
	if err != nil {
		return fmt.Errorf("drop delivery queue %s: %w", id, err)
	}
	if res.DeletedCount == 0 {
		return nil // taken by another replica meanwhile, which drops it in turn
	}
	if _, err := s.events.DeleteMany(ctx, bson.M{"queue": id}); err != nil {
		return fmt.Errorf("drop the events of delivery queue %s: %w", id, err)
	}
	return nil
}

// ReleaseQueues lets go of every queue owner holds.
func (s *Deliveries) ReleaseQueues(ctx context.Context, owner string) error {
	if _, err := s.queues.UpdateMany(ctx, bson.M{"owner": owner}, bson.M{"$set": bson.M{"owner": ""}}); err != nil {
		return fmt.Errorf("release the delivery queues: %w", err)
	}
	return nil
}

// FindDueQueues answers the ids of queues due at now that owner may hold.
func (s *Deliveries) FindDueQueues(ctx context.Context, owner string, now time.Time, limit int) ([]string, error) {
	docs, err := mongox.FindAll[struct {
		ID string `bson:"_id"`
	}](ctx, s.queues, bson.M{"due": bson.M{"$lte": now}, "$or": free(owner, now)},
		options.Find().SetSort(bson.D{{Key: "due", Value: 1}}).SetLimit(int64(limit)).SetProjection(bson.M{"_id": 1}))
	if err != nil {
		return nil, fmt.Errorf("find the delivery queues due: %w", err)
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids, nil
}

// AddFailure keeps an event given up on; one kept already under its id stays.
func (s *Deliveries) AddFailure(ctx context.Context, f domain.Failure) error {
	_, err := s.failures.InsertOne(ctx, failureDoc{ID: f.ID, Sink: f.Sink, Run: f.Run, EventID: f.EventID, Body: string(f.Body),
		Attempts: f.Attempts, Reason: f.Reason, Recorded: f.Recorded, GivenUp: f.GivenUp})
	if err != nil && !mongox.IsDuplicateKey(err) {
		return fmt.Errorf("keep the failed delivery %s: %w", f.ID, err)
	}
	return nil
}

// FindFailures answers the events given up on for run, for operators and tests.
func (s *Deliveries) FindFailures(ctx context.Context, run string) ([]domain.Failure, error) {
	docs, err := mongox.FindAll[failureDoc](ctx, s.failures, bson.M{"run": run}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("find the failed deliveries of run %s: %w", run, err)
	}
	out := make([]domain.Failure, len(docs))
	for i, d := range docs {
		out[i] = domain.Failure{ID: d.ID, Sink: d.Sink, Run: d.Run, EventID: d.EventID, Body: []byte(d.Body), Attempts: d.Attempts,
			Reason: d.Reason, Recorded: d.Recorded.UTC(), GivenUp: d.GivenUp.UTC()}
	}
	return out, nil
}

// Purge deletes the failures given up before failedBefore and the event records stored
// before staleBefore.
func (s *Deliveries) Purge(ctx context.Context, failedBefore, staleBefore time.Time) error {
	if _, err := s.failures.DeleteMany(ctx, bson.M{"givenUp": bson.M{"$lt": failedBefore}}); err != nil {
		return fmt.Errorf("purge failed deliveries: %w", err)
	}
	if _, err := s.events.DeleteMany(ctx, bson.M{"recorded": bson.M{"$lt": staleBefore}}); err != nil {
		return fmt.Errorf("purge stale queued events: %w", err)
	}
	return nil
}

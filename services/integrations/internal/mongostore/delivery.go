// Package mongostore keeps the integrations service's records in MongoDB.
package mongostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
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
	// Recording and advancing, the writes of every event, are combined under load: the
	// embedded database writes one command at a time, each costing a sync to disk.
	records  *mongox.Combiner[recordWrite, error]
	advances *mongox.Combiner[advanceWrite, advanced]
	deletes  *mongox.Combiner[deleteWrite, error]
}

// combineMax bounds the writes one command carries.
const combineMax = 128

// recordWrite is one SaveRecorded: filter on the queue's version, and the update.
type recordWrite struct {
	id      string
	version int64
	// lastID is the id of the event recorded, the last of Recent.
	lastID string
	set    bson.M
}

// advanceWrite is one AdvanceQueue. Its token, written with it, tells after a combined
// write whether it was this write that moved the queue.
type advanceWrite struct {
	id, owner, token string
	seq              int64
	due, until       time.Time
}

// advanceTokens numbers the advances of this process.
var advanceTokens atomic.Int64

type advanced struct {
	q   *domain.Queue
	err error
}

var _ app.DeliveryStore = (*Deliveries)(nil)

// NewDeliveries returns the delivery records of db.
func NewDeliveries(db *mongo.Database) *Deliveries {
	s := &Deliveries{queues: db.Collection("sinkqueues"), events: db.Collection("sinkevents"), failures: db.Collection("sinkfailures")}
	s.records = mongox.NewCombiner(combineMax, s.recordAll)
	s.advances = mongox.NewCombiner(combineMax, s.advanceAll)
	s.deletes = mongox.NewCombiner(combineMax, s.deleteAll)
	return s
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
	// Advanced is the token of the last advance.
	Advanced string `bson:"advanced,omitempty"`
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
	w := recordWrite{id: q.ID, version: q.Version, set: set}
	if n := len(q.Recent); n > 0 {
		w.lastID = q.Recent[n-1].EventID
	}
	if err := s.records.Do(ctx, w); err != nil {
		return fmt.Errorf("record in delivery queue %s: %w", q.ID, err)
	}
	q.Version++
	return nil
}

// recordAll writes records, answering domain.ErrQueueChanged for those whose queue moved
// on since it was read.
func (s *Deliveries) recordAll(ctx context.Context, ws []recordWrite) []error {
	return inRounds(ws, func(w recordWrite) string { return w.id }, func(ws []recordWrite) []error { return s.recordRound(ctx, ws) })
}

// inRounds writes ws in rounds that each name a queue once, since the embedded database
// checks the conditions of a command's writes all before it makes any: two on one queue
// would both pass. It answers each write's result, in order.
func inRounds[T, R any](ws []T, id func(T) string, write func([]T) []R) []R {
	out := make([]R, len(ws))
	left := make([]int, len(ws))
	for i := range left {
		left[i] = i
	}
	for len(left) > 0 {
		seen := map[string]bool{}
		var round, later []int
		for _, i := range left {
			if k := id(ws[i]); seen[k] {
				later = append(later, i)
			} else {
				seen[k] = true
				round = append(round, i)
			}
		}
		batch := make([]T, len(round))
		for j, i := range round {
			batch[j] = ws[i]
		}
		for j, r := range write(batch) {
			out[round[j]] = r
		}
		left = later
	}
	return out
}

func (s *Deliveries) recordRound(ctx context.Context, ws []recordWrite) []error {
	out := make([]error, len(ws))
	if len(ws) == 1 {
		res, err := s.queues.UpdateOne(ctx, bson.M{"_id": ws[0].id, "version": ws[0].version}, bson.M{"$set": ws[0].set})
		switch {
		case err != nil:
			out[0] = err
		case res.MatchedCount == 0:
			out[0] = domain.ErrQueueChanged
		}
		return out
	}
	models := make([]mongo.WriteModel, len(ws))
	for i, w := range ws {
		models[i] = mongo.NewUpdateOneModel().SetFilter(bson.M{"_id": w.id, "version": w.version}).SetUpdate(bson.M{"$set": w.set})
	}
	res, err := s.queues.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	if err == nil && res.MatchedCount == int64(len(ws)) {
		return out
	}
	// Some lost to another writer: which, the queues say. One whose write is not seen is
	// answered as changed, and its recorder, reading it again, finds its event there if
	// it was written after all.
	docs, ferr := queuesByID(ctx, s, ws, func(w recordWrite) string { return w.id })
	for i, w := range ws {
		d, ok := docs[w.id]
		switch {
		case ferr != nil:
			out[i] = errors.Join(err, ferr)
		case !ok || d.Version != w.version+1 || len(d.Recent) == 0 || d.Recent[len(d.Recent)-1].ID != w.lastID:
			out[i] = domain.ErrQueueChanged
		}
	}
	return out
}

// queuesByID reads the queues ws name.
func queuesByID[T any](ctx context.Context, s *Deliveries, ws []T, id func(T) string) (map[string]queueDoc, error) {
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = id(w)
	}
	docs, err := mongox.FindAll[queueDoc](ctx, s.queues, bson.M{"_id": bson.M{"$in": ids}})
	if err != nil {
		return nil, fmt.Errorf("read delivery queues: %w", err)
	}
	out := make(map[string]queueDoc, len(docs))
	for _, d := range docs {
		out[d.ID] = d
	}
	return out, nil
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
	token := owner + "/" + strconv.FormatInt(advanceTokens.Add(1), 10)
	r := s.advances.Do(ctx, advanceWrite{id: id, owner: owner, token: token, seq: seq, due: due, until: until})
	return r.q, r.err
}

func advanceFilter(w advanceWrite) bson.M {
	return bson.M{"_id": w.id, "owner": w.owner, "next": w.seq}
}

func advanceUpdate(w advanceWrite) bson.M {
	return bson.M{"$inc": bson.M{"next": 1}, "$unset": bson.M{"held." + inlineKey(w.seq): ""},
		"$set": bson.M{"attempt": 0, "due": w.due, "lastError": "", "leaseUntil": w.until, "advanced": w.token}}
}

// advanceAll writes advances and answers each queue after it, or domain.ErrQueueNotHeld.
func (s *Deliveries) advanceAll(ctx context.Context, ws []advanceWrite) []advanced {
	return inRounds(ws, func(w advanceWrite) string { return w.id }, func(ws []advanceWrite) []advanced { return s.advanceRound(ctx, ws) })
}

func (s *Deliveries) advanceRound(ctx context.Context, ws []advanceWrite) []advanced {
	out := make([]advanced, len(ws))
	if len(ws) == 1 {
		w := ws[0]
		out[0].q, out[0].err = s.updateHeld(ctx, advanceFilter(w), advanceUpdate(w), "advance delivery queue "+w.id)
		return out
	}
	models := make([]mongo.WriteModel, len(ws))
	for i, w := range ws {
		models[i] = mongo.NewUpdateOneModel().SetFilter(advanceFilter(w)).SetUpdate(advanceUpdate(w))
	}
	_, err := s.queues.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
	// The queues after: one read for all, which the embedded database does not sync.
	docs, ferr := queuesByID(ctx, s, ws, func(w advanceWrite) string { return w.id })
	for i, w := range ws {
		d, ok := docs[w.id]
		switch {
		case ferr != nil:
			out[i].err = fmt.Errorf("advance delivery queue %s: %w", w.id, errors.Join(err, ferr))
		case !ok || d.Advanced != w.token:
			out[i].err = fmt.Errorf("advance delivery queue %s: %w", w.id, domain.ErrQueueNotHeld)
		default:
			out[i].q = d.queue()
		}
	}
	return out
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
	if err := s.deletes.Do(ctx, deleteWrite{id: q.ID, owner: owner, version: q.Version}); err != nil {
		return fmt.Errorf("delete delivery queue %s: %w", q.ID, err)
	}
	return nil
}

// deleteWrite is one DeleteQueue.
type deleteWrite struct {
	id, owner string
	version   int64
}

func (w deleteWrite) filter() bson.M {
	return bson.M{"_id": w.id, "owner": w.owner, "version": w.version}
}

// deleteAll deletes queues, answering domain.ErrQueueChanged for those that moved on.
func (s *Deliveries) deleteAll(ctx context.Context, ws []deleteWrite) []error {
	return inRounds(ws, func(w deleteWrite) string { return w.id }, func(ws []deleteWrite) []error {
		out := make([]error, len(ws))
		if len(ws) == 1 {
			res, err := s.queues.DeleteOne(ctx, ws[0].filter())
			switch {
			case err != nil:
				out[0] = err
			case res.DeletedCount == 0:
				out[0] = domain.ErrQueueChanged
			}
			return out
		}
		// Only those at their version and holder now are sent: the others have moved on,
		// and one not there afterwards was deleted by this command.
		before, err := queuesByID(ctx, s, ws, func(w deleteWrite) string { return w.id })
		if err != nil {
			for i := range out {
				out[i] = err
			}
			return out
		}
		var models []mongo.WriteModel
		for i, w := range ws {
			d, ok := before[w.id]
			if !ok || d.Owner != w.owner || d.Version != w.version {
				out[i] = domain.ErrQueueChanged
				continue
			}
			models = append(models, mongo.NewDeleteOneModel().SetFilter(w.filter()))
		}
		if len(models) == 0 {
			return out
		}
		res, err := s.queues.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		if err == nil && res.DeletedCount == int64(len(models)) {
			return out
		}
		after, ferr := queuesByID(ctx, s, ws, func(w deleteWrite) string { return w.id })
		for i, w := range ws {
			if out[i] != nil {
				continue
			}
			if _, there := after[w.id]; there || ferr != nil {
				out[i] = errors.Join(domain.ErrQueueChanged, ferr)
			}
		}
		return out
	})
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

package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// Deliveries is app.DeliveryStore in the file: the queues (sink_queues), the events they
// keep apart (sink_events) and the events given up on (sink_failures).
//
// Every write of the delivery path is one statement on one queue by its id, conditional
// on what the app's port says: a recorder's on the version it read, a holder's on its
// name (and an advance on the event it delivered), a claim on the queue being free. A
// queue's count (last), place (next) and the events it holds itself (held) are in its
// row, so one write moves them together; the poll for queues due and free reads the due
// index alone.
type Deliveries struct {
	db *sqlitex.DB
}

var _ app.DeliveryStore = (*Deliveries)(nil)

// The delivery path's statements; checked by index in plan_test.go.
const (
	queueColumns = `id, sink, run, gen, last, next, recent, attempt, due, last_error, owner, lease_until, version, held`
	qFindQueue   = `SELECT ` + queueColumns + ` FROM sink_queues WHERE id = ?`
	qCreateQueue = `INSERT INTO sink_queues (` + queueColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// qRecord and qRecordHeld store a recorder's count and recent events on the version
	// it read, qRecordHeld with the event the queue holds itself.
	qRecord      = `UPDATE sink_queues SET last = ?, recent = ?, version = ? WHERE id = ? AND version = ?`
	qRecordHeld  = `UPDATE sink_queues SET last = ?, recent = ?, version = ?, held = json_set(held, ?, json(?)) WHERE id = ? AND version = ?`
	qPutEvent    = `INSERT INTO sink_events (key, queue, event_id, body, recorded) VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`
	qFindEvent   = `SELECT event_id, body, recorded FROM sink_events WHERE key = ?`
	qDeleteEvent = `DELETE FROM sink_events WHERE key = ?`
	// qClaim takes a queue that is free, or whose holder's lease lapsed, or that the
	// claimer holds.
	qClaim = `UPDATE sink_queues SET owner = ?, lease_until = ? WHERE id = ? AND (owner = '' OR owner = ? OR lease_until < ?)
		RETURNING ` + queueColumns
	// qAdvance moves its holder's queue past the event it delivered (next), dropping that
	// event from what it holds.
	qAdvance = `UPDATE sink_queues SET next = next + 1, held = json_remove(held, ?), attempt = 0, due = ?, last_error = '', lease_until = ?
		WHERE id = ? AND owner = ? AND next = ? RETURNING ` + queueColumns
	qPostpone    = `UPDATE sink_queues SET attempt = ?, due = ?, last_error = ?, lease_until = ? WHERE id = ? AND owner = ?`
	qDeleteQueue = `DELETE FROM sink_queues WHERE id = ? AND owner = ? AND version = ?`
	qDropQueue   = `DELETE FROM sink_queues WHERE id = ? AND owner = ?`
	qDropEvents  = `DELETE FROM sink_events WHERE queue = ?`
	qRelease     = `UPDATE sink_queues SET owner = '' WHERE owner = ? AND owner != ''`
	qDue         = `SELECT id FROM sink_queues WHERE due <= ? AND (owner = '' OR owner = ? OR lease_until < ?) ORDER BY due LIMIT ?`
	qAddFailure  = `INSERT INTO sink_failures (id, sink, run, event_id, body, attempts, reason, recorded, given_up) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING`
	qFindFailures = `SELECT id, sink, run, event_id, body, attempts, reason, recorded, given_up FROM sink_failures WHERE run = ? ORDER BY id`
	qPurgeFailed  = `DELETE FROM sink_failures WHERE given_up < ?`
	qPurgeStale   = `DELETE FROM sink_events WHERE recorded < ?`
	// qLetGo lets go of every queue, once, when the file is opened: not a path of the
	// deliverer's.
	qLetGo = `UPDATE sink_queues SET owner = '' WHERE owner != ''`
)

// recentDoc is one of a queue's recent events, in its recent column.
type recentDoc struct {
	ID  string `json:"id"`
	Seq int64  `json:"seq"`
}

// heldDoc is an event a queue holds itself, in its held column under heldKey of its Seq.
type heldDoc struct {
	EventID  string `json:"eventId"`
	Body     string `json:"body"`
	Recorded int64  `json:"recorded"`
}

// heldKey names event seq in the held column: a name, not a number, which a JSON path
// would take for an array index.
func heldKey(seq int64) string { return "s" + strconv.FormatInt(seq, 10) }

// heldPath is the JSON path of event seq in the held column.
func heldPath(seq int64) string { return "$." + heldKey(seq) }

func toHeld(e domain.Event) heldDoc {
	return heldDoc{EventID: e.EventID, Body: string(e.Body), Recorded: ms(e.Recorded)}
}

func encodeRecent(q *domain.Queue) (string, error) {
	recent := make([]recentDoc, len(q.Recent))
	for i, r := range q.Recent {
		recent[i] = recentDoc{ID: r.EventID, Seq: r.Seq}
	}
	raw, err := json.Marshal(recent)
	return string(raw), err
}

// queueRow is a queue as its row holds it.
type queueRow struct {
	q            domain.Queue
	recent, held string
	due, lease   int64
}

// scan reads a row of queueColumns.
func (r *queueRow) scan(sc interface{ Scan(...any) error }) error {
	q := &r.q
	return sc.Scan(&q.ID, &q.Sink, &q.Run, &q.Gen, &q.Last, &q.Next, &r.recent, &q.Attempt, &r.due, &q.LastError, &q.Owner, &r.lease,
		&q.Version, &r.held)
}

// queue decodes the queue r holds.
func (r *queueRow) queue() (*domain.Queue, error) {
	q := r.q
	q.Due, q.LeaseUntil = fromMS(r.due), fromMS(r.lease)
	var rs []recentDoc
	if err := json.Unmarshal([]byte(r.recent), &rs); err != nil {
		return nil, fmt.Errorf("decode delivery queue %s: %w", q.ID, err)
	}
	q.Recent = make([]domain.Recorded, len(rs))
	for i, x := range rs {
		q.Recent[i] = domain.Recorded{EventID: x.ID, Seq: x.Seq}
	}
	var hs map[string]heldDoc
	if err := json.Unmarshal([]byte(r.held), &hs); err != nil {
		return nil, fmt.Errorf("decode delivery queue %s: %w", q.ID, err)
	}
	for k, e := range hs {
		seq, err := strconv.ParseInt(strings.TrimPrefix(k, "s"), 10, 64)
		if err != nil {
			continue // not one of ours
		}
		if q.Inline == nil {
			q.Inline = map[int64]domain.Event{}
		}
		q.Inline[seq] = domain.Event{Queue: q.ID, Gen: q.Gen, Seq: seq, EventID: e.EventID, Body: []byte(e.Body), Recorded: fromMS(e.Recorded)}
	}
	return &q, nil
}

// FindQueue answers queue id, nil when there is none.
func (s *Deliveries) FindQueue(ctx context.Context, id string) (*domain.Queue, error) {
	var r queueRow
	err := r.scan(s.db.QueryRow(ctx, qFindQueue, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find delivery queue %s: %w", id, err)
	}
	return r.queue()
}

// CreateQueue stores a new queue at version 1, with the events it holds.
func (s *Deliveries) CreateQueue(ctx context.Context, q *domain.Queue) error {
	recent, err := encodeRecent(q)
	if err != nil {
		return fmt.Errorf("create delivery queue %s: %w", q.ID, err)
	}
	held := make(map[string]heldDoc, len(q.Inline))
	for seq, e := range q.Inline {
		held[heldKey(seq)] = toHeld(e)
	}
	rawHeld, err := json.Marshal(held)
	if err != nil {
		return fmt.Errorf("create delivery queue %s: %w", q.ID, err)
	}
	_, err = execOn(ctx, s.db, qCreateQueue, q.ID, q.Sink, q.Run, q.Gen, q.Last, q.Next, recent, q.Attempt, ms(q.Due), q.LastError,
		q.Owner, ms(q.LeaseUntil), int64(1), string(rawHeld))
	if sqlitex.IsUnique(err) {
		return fmt.Errorf("create delivery queue %s: %w", q.ID, domain.ErrQueueChanged)
	}
	if err != nil {
		return fmt.Errorf("create delivery queue %s: %w", q.ID, err)
	}
	q.Version = 1
	return nil
}

// SaveRecorded stores q's Last and Recent, and inline among the events it holds, at the
// version q was read at.
func (s *Deliveries) SaveRecorded(ctx context.Context, q *domain.Queue, inline *domain.Event) error {
	recent, err := encodeRecent(q)
	if err != nil {
		return fmt.Errorf("record in delivery queue %s: %w", q.ID, err)
	}
	var n int64
	if inline == nil {
		n, err = execOn(ctx, s.db, qRecord, q.Last, recent, q.Version+1, q.ID, q.Version)
	} else {
		var held []byte
		if held, err = json.Marshal(toHeld(*inline)); err == nil {
			n, err = execOn(ctx, s.db, qRecordHeld, q.Last, recent, q.Version+1, heldPath(inline.Seq), string(held), q.ID, q.Version)
		}
	}
	if err != nil {
		return fmt.Errorf("record in delivery queue %s: %w", q.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("record in delivery queue %s: %w", q.ID, domain.ErrQueueChanged)
	}
	q.Version++
	return nil
}

// PutEvent stores a queued event, keeping one already stored under its key.
func (s *Deliveries) PutEvent(ctx context.Context, e domain.Event) error {
	key := domain.EventKey(e.Queue, e.Gen, e.Seq)
	if _, err := execOn(ctx, s.db, qPutEvent, key, e.Queue, e.EventID, e.Body, ms(e.Recorded)); err != nil {
		return fmt.Errorf("store queued event %s: %w", key, err)
	}
	return nil
}

// FindEvent answers event seq of queue's generation gen.
func (s *Deliveries) FindEvent(ctx context.Context, queue, gen string, seq int64) (domain.Event, error) {
	key := domain.EventKey(queue, gen, seq)
	e := domain.Event{Queue: queue, Gen: gen, Seq: seq}
	var recorded int64
	err := s.db.QueryRow(ctx, qFindEvent, key).Scan(&e.EventID, &e.Body, &recorded)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Event{}, fmt.Errorf("queued event %s: %w", key, domain.ErrEventMissing)
	}
	if err != nil {
		return domain.Event{}, fmt.Errorf("find queued event %s: %w", key, err)
	}
	e.Recorded = fromMS(recorded)
	return e, nil
}

// DeleteEvent deletes the record of an event.
func (s *Deliveries) DeleteEvent(ctx context.Context, key string) error {
	if _, err := execOn(ctx, s.db, qDeleteEvent, key); err != nil {
		return fmt.Errorf("delete queued event %s: %w", key, err)
	}
	return nil
}

// ClaimQueue makes owner the holder of queue id until until, when it is free.
func (s *Deliveries) ClaimQueue(ctx context.Context, id, owner string, now, until time.Time) (*domain.Queue, error) {
	return s.held(ctx, "claim delivery queue "+id, qClaim, owner, ms(until), id, owner, ms(now))
}

// AdvanceQueue moves owner's queue id past its event seq.
func (s *Deliveries) AdvanceQueue(ctx context.Context, id, owner string, seq int64, due, until time.Time) (*domain.Queue, error) {
	return s.held(ctx, "advance delivery queue "+id, qAdvance, heldPath(seq), ms(due), ms(until), id, owner, seq)
}

// held runs a statement that changes one queue and answers it as written;
// domain.ErrQueueNotHeld when it changed none. The row is decoded off the writer, which
// the other writes wait on.
func (s *Deliveries) held(ctx context.Context, what, query string, args ...any) (*domain.Queue, error) {
	var r queueRow
	var found bool
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		rows, err := tx.Query(query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		if found = rows.Next(); found {
			if err := r.scan(rows); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		// Closed before the commit: RETURNING rows are the statement's, which runs to its
		// end only once they are read.
		return rows.Close()
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !found {
		return nil, fmt.Errorf("%s: %w", what, domain.ErrQueueNotHeld)
	}
	q, err := r.queue()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return q, nil
}

// PostponeQueue records a failed attempt at owner's queue id.
func (s *Deliveries) PostponeQueue(ctx context.Context, id, owner string, attempt int, due time.Time, lastError string, until time.Time) error {
	n, err := execOn(ctx, s.db, qPostpone, attempt, ms(due), lastError, ms(until), id, owner)
	if err != nil {
		return fmt.Errorf("postpone delivery queue %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("postpone delivery queue %s: %w", id, domain.ErrQueueNotHeld)
	}
	return nil
}

// DeleteQueue deletes owner's queue q if still at q's version.
func (s *Deliveries) DeleteQueue(ctx context.Context, q *domain.Queue, owner string) error {
	n, err := execOn(ctx, s.db, qDeleteQueue, q.ID, owner, q.Version)
	if err != nil {
		return fmt.Errorf("delete delivery queue %s: %w", q.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("delete delivery queue %s: %w", q.ID, domain.ErrQueueChanged)
	}
	return nil
}

// DropQueue deletes owner's queue id and its events, together.
func (s *Deliveries) DropQueue(ctx context.Context, id, owner string) error {
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		n, err := tx.ExecAffected(qDropQueue, id, owner)
		if err != nil || n == 0 {
			return err // none: taken by another holder meanwhile, which drops it in turn
		}
		_, err = tx.Exec(qDropEvents, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("drop delivery queue %s: %w", id, err)
	}
	return nil
}

// ReleaseQueues lets go of every queue owner holds.
func (s *Deliveries) ReleaseQueues(ctx context.Context, owner string) error {
	if _, err := execOn(ctx, s.db, qRelease, owner); err != nil {
		return fmt.Errorf("release the delivery queues: %w", err)
	}
	return nil
}

// FindDueQueues answers the ids of queues due at now that owner may hold, earliest due
// first.
func (s *Deliveries) FindDueQueues(ctx context.Context, owner string, now time.Time, limit int) ([]string, error) {
	rows, err := s.db.Query(ctx, qDue, ms(now), owner, ms(now), limit)
	if err != nil {
		return nil, fmt.Errorf("find the delivery queues due: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("find the delivery queues due: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find the delivery queues due: %w", err)
	}
	return ids, nil
}

// AddFailure keeps an event given up on; one kept already under its id stays.
func (s *Deliveries) AddFailure(ctx context.Context, f domain.Failure) error {
	_, err := execOn(ctx, s.db, qAddFailure, f.ID, f.Sink, f.Run, f.EventID, f.Body, f.Attempts, f.Reason, ms(f.Recorded), ms(f.GivenUp))
	if err != nil {
		return fmt.Errorf("keep the failed delivery %s: %w", f.ID, err)
	}
	return nil
}

// FindFailures answers the events given up on for run, for operators and tests.
func (s *Deliveries) FindFailures(ctx context.Context, run string) ([]domain.Failure, error) {
	rows, err := s.db.Query(ctx, qFindFailures, run)
	if err != nil {
		return nil, fmt.Errorf("find the failed deliveries of run %s: %w", run, err)
	}
	defer rows.Close()
	out := []domain.Failure{}
	for rows.Next() {
		var f domain.Failure
		var recorded, givenUp int64
		if err := rows.Scan(&f.ID, &f.Sink, &f.Run, &f.EventID, &f.Body, &f.Attempts, &f.Reason, &recorded, &givenUp); err != nil {
			return nil, fmt.Errorf("find the failed deliveries of run %s: %w", run, err)
		}
		f.Recorded, f.GivenUp = fromMS(recorded), fromMS(givenUp)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find the failed deliveries of run %s: %w", run, err)
	}
	return out, nil
}

// Purge deletes the failures given up before failedBefore and the event records stored
// before staleBefore, in one commit.
func (s *Deliveries) Purge(ctx context.Context, failedBefore, staleBefore time.Time) error {
	err := s.db.Write(ctx, func(tx *sqlitex.Tx) error {
		if _, err := tx.Exec(qPurgeFailed, ms(failedBefore)); err != nil {
			return err
		}
		_, err := tx.Exec(qPurgeStale, ms(staleBefore))
		return err
	})
	if err != nil {
		return fmt.Errorf("purge failed deliveries and stale queued events: %w", err)
	}
	return nil
}

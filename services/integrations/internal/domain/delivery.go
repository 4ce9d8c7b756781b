package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Outgoing events (API.md §7, "Outgoing"): every status event of a run is delivered to
// every sink of settings, in order per run and sink. Each (sink, run) pair has its own
// queue, so a sink that is down holds up only its own queues, and one run's events wait
// only behind that run's. A queue numbers its events as they are recorded (Seq 1, 2, …
// within one generation, Gen) and delivers them one at a time from Next; it is deleted
// once empty, and a later event of the run starts a new generation.

// Errors of the delivery records.
var (
	// ErrQueueChanged is a write to a queue that lost to another writer (a recorder or the
	// replica holding the queue): read again and decide anew.
	ErrQueueChanged = errors.New("the delivery queue was changed meanwhile")
	// ErrQueueNotHeld is a queue some other replica holds, or one that no longer exists.
	ErrQueueNotHeld = errors.New("the delivery queue is not held by this replica")
	// ErrEventMissing is an event a queue counts but whose record is not (yet) stored.
	ErrEventMissing = errors.New("the queued event is not stored")
)

// RecentIDs is how many event ids a queue remembers, so that an event recorded again (a
// redelivery from the broker) is queued once.
const RecentIDs = 16

// QueueID is the id of the queue of sink's events of run: a digest of the sink, so that
// ids stay short and free of the URL's characters, then the run's id.
func QueueID(sink, run string) string {
	return SinkKey(sink) + ":" + run
}

// SinkKey is a short stable name of a sink URL, for ids and logs (a sink's URL may carry
// a token in its query, which logs must not show).
func SinkKey(sink string) string {
	sum := sha256.Sum256([]byte(sink))
	return hex.EncodeToString(sum[:8])
}

// SinkKeyOf answers the sink key a queue id starts with.
func SinkKeyOf(queue string) string {
	k, _, _ := strings.Cut(queue, ":")
	return k
}

// Queue is one sink's queue of one run's events, as stored.
type Queue struct {
	ID   string
	Sink string
	Run  string
	// Gen names this life of the queue: its events' record ids include it, so that a
	// queue deleted and started again never mistakes a leftover record for a new one.
	Gen string
	// Last is the Seq of the last event recorded; Next that of the next to deliver. The
	// queue is empty when Next > Last.
	Last, Next int64
	// Recent are the latest events recorded, at most RecentIDs, oldest first.
	Recent []Recorded
	// Attempt counts the failed attempts at delivering event Next; Due is when it is next
	// tried, LastError what the last attempt got.
	Attempt   int
	Due       time.Time
	LastError string
	// Owner is the replica working the queue, until LeaseUntil.
	Owner      string
	LeaseUntil time.Time
	// Version changes with every write of a recorder, and guards the queue's deletion.
	Version int64
	// Inline are the events waiting that the queue holds itself, by Seq: while a queue
	// is short (InlineMax), recording an event is one write, and the deliverer reads it
	// with the queue. The others are stored apart, each on its own (EventKey).
	Inline map[int64]Event
}

// InlineMax is how many waiting events a queue holds itself; more are stored apart, so a
// queue of a sink that is down stays small.
const InlineMax = 32

// Inlines reports whether an event recorded now is held by the queue itself.
func (q *Queue) Inlines() bool { return q.Last-q.Next+1 < InlineMax }

// Recorded is an event a queue holds: its id and the Seq it got.
type Recorded struct {
	EventID string
	Seq     int64
}

// Empty reports whether every event recorded has been delivered or given up.
func (q *Queue) Empty() bool { return q.Next > q.Last }

// SeqOf answers the Seq of event id if the queue recorded it recently.
func (q *Queue) SeqOf(id string) (int64, bool) {
	i := slices.IndexFunc(q.Recent, func(r Recorded) bool { return r.EventID == id })
	if i < 0 {
		return 0, false
	}
	return q.Recent[i].Seq, true
}

// Append records event id as the queue's next event and answers its Seq.
func (q *Queue) Append(id string) int64 {
	q.Last++
	q.Recent = append(q.Recent, Recorded{EventID: id, Seq: q.Last})
	if n := len(q.Recent); n > RecentIDs {
		q.Recent = slices.Clone(q.Recent[n-RecentIDs:])
	}
	return q.Last
}

// Event is one status event waiting in a queue: the CloudEvent in structured JSON, as
// the runs service published it (its id, source, type, subject, time and data kept).
type Event struct {
	Queue   string
	Gen     string
	Seq     int64
	EventID string
	// Body is the CloudEvent in structured JSON mode.
	Body []byte
	// Recorded is when the event was queued: its age decides when it is given up.
	Recorded time.Time
}

// EventKey is the id of the record of a queue's event seq of generation gen: its order in
// the queue, readable by id alone.
func EventKey(queue, gen string, seq int64) string {
	return fmt.Sprintf("%s/%s/%012d", queue, gen, seq)
}

// Failure is an event given up on: kept a while for operators, then purged.
type Failure struct {
	// ID is the event's record id (EventKey).
	ID       string
	Sink     string
	Run      string
	EventID  string
	Body     []byte
	Attempts int
	// Reason is the last attempt's error, or why the event was dropped.
	Reason   string
	Recorded time.Time
	GivenUp  time.Time
}

// Retry is the schedule of attempts at delivering an event: the wait after the n-th
// failed attempt is First doubled n-1 times, at most Max; an event still not delivered
// GiveUpAfter after it was recorded is given up.
type Retry struct {
	First       time.Duration
	Max         time.Duration
	GiveUpAfter time.Duration
}

// DefaultRetry is 100 ms doubling to 5 minutes, given up after 24 hours: a sink that is
// down for a day loses that day's events, each kept as a Failure.
var DefaultRetry = Retry{First: 100 * time.Millisecond, Max: 5 * time.Minute, GiveUpAfter: 24 * time.Hour}

// Backoff answers the wait after the n-th failed attempt (n ≥ 1).
func (r Retry) Backoff(n int) time.Duration {
	d := r.First
	for i := 1; i < n && d < r.Max; i++ {
		d *= 2
	}
	return min(d, r.Max)
}

// GivesUp reports whether an event recorded at recorded is given up at now, once an
// attempt at it failed.
func (r Retry) GivesUp(recorded, now time.Time) bool {
	return now.Sub(recorded) >= r.GiveUpAfter
}

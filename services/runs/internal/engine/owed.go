package engine

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Status events are owed until their consumer says it recorded them: a step numbers the
// events it makes (events.SeqExtension) and stores them with the change they report, in
// the Owed of the run or task run it writes anyway (domain.OwedEvent). Integrations says
// which of a run's events it recorded, by number (events.TypeStatusRecorded), and
// Recorded takes it in. What a run owes is sent again:
//
//   - when its owner loads it from the store to settle it (a restart, a takeover, another
//     replica's step, a step stored in part): every event it holds not known to be
//     recorded, in order, before anything new;
//   - once it is put away, from the archive: its events not known to be recorded then
//     stay in its archived copy, which the reconciler sends again every Config.ResendOwed
//     until they are said to be recorded, and once as soon as a replica starts.
//
// Each event keeps its id and number, so consumers and sinks drop what they had.

// recordedEvents is what this replica has heard of the recording of runs' events.
type recordedEvents struct {
	mu sync.Mutex
	// seen are, for the runs in memory here, the numbers of their events said to be
	// recorded: a step drops those from what it writes.
	seen map[string]map[int64]bool
	// elsewhere are the same for runs not in memory here when heard of (another replica's,
	// which a step here may load), fewer (maxElsewhere): a step here sends again only
	// what is not known to be recorded.
	elsewhere map[string]map[int64]bool
	// owing are the runs put away here, or sent again from the archive here, with the
	// numbers of their events not said to be recorded then.
	owing map[string]map[int64]bool
	// clear is what to drop from the archive next (ClearOwed).
	clear map[string]map[int64]bool
	wake  chan struct{}
}

func newRecordedEvents() *recordedEvents {
	return &recordedEvents{seen: map[string]map[int64]bool{}, elsewhere: map[string]map[int64]bool{}, owing: map[string]map[int64]bool{},
		clear: map[string]map[int64]bool{}, wake: make(chan struct{}, 1)}
}

// maxRecordedRuns bounds the runs a replica remembers recorded events of; past it, it
// forgets, which only costs events sent again.
const maxRecordedRuns = 100_000

// maxElsewhere bounds the runs not in memory here a replica remembers recorded events of.
const maxElsewhere = 10_000

// add puts seqs in m's set of run, bounding m.
func add(m map[string]map[int64]bool, run string, seqs []int64) {
	set, ok := m[run]
	if !ok {
		if len(m) >= maxRecordedRuns {
			clear(m)
		}
		set = map[int64]bool{}
		m[run] = set
	}
	for _, s := range seqs {
		set[s] = true
	}
}

// Recorded takes in that run's status events numbered seqs are recorded downstream.
func (e *Engine) Recorded(run string, seqs []int64) {
	e.metrics.recorded(run, seqs)
	inMemory := e.held.holds(run) || e.parked.has(run)
	r := e.recorded
	r.mu.Lock()
	defer r.mu.Unlock()
	if inMemory {
		add(r.seen, run, seqs)
	} else if _, ok := r.owing[run]; !ok {
		if len(r.elsewhere) >= maxElsewhere {
			clear(r.elsewhere)
		}
		add(r.elsewhere, run, seqs)
	}
	owed, owing := r.owing[run]
	if !owing {
		return
	}
	add(r.clear, run, seqs)
	for _, s := range seqs {
		delete(owed, s)
	}
	if len(owed) == 0 {
		delete(r.owing, run)
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// recordedOf answers the numbers of run's events known to be recorded; the caller must not
// change them.
func (e *Engine) recordedOf(run string) map[int64]bool {
	e.recorded.mu.Lock()
	defer e.recorded.mu.Unlock()
	seen := maps.Clone(e.recorded.seen[run])
	if other := e.recorded.elsewhere[run]; len(other) > 0 {
		if seen == nil {
			seen = map[int64]bool{}
		}
		maps.Copy(seen, other)
	}
	return seen
}

// owing marks run, put away or sent again from the archive, as owing owed.
func (e *Engine) owing(run string, owed []domain.OwedEvent) {
	r := e.recorded
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, run)
	delete(r.elsewhere, run)
	seqs := make([]int64, len(owed))
	for i, o := range owed {
		seqs[i] = o.Seq
	}
	delete(r.owing, run)
	add(r.owing, run, seqs)
}

// forgetRecorded drops what is known of run's events once it has left memory for good.
func (e *Engine) forgetRecorded(run string) {
	e.recorded.mu.Lock()
	defer e.recorded.mu.Unlock()
	delete(e.recorded.seen, run)
	delete(e.recorded.elsewhere, run)
}

// clearLoop drops from the archive the events said to be recorded, those heard of
// meanwhile together, until ctx ends.
func (e *Engine) clearLoop(ctx context.Context) {
	r := e.recorded
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		r.mu.Lock()
		batch := r.clear
		r.clear = map[string]map[int64]bool{}
		r.mu.Unlock()
		if err := e.runs.ClearOwed(ctx, batch); err != nil && ctx.Err() == nil {
			// What stays is sent again (resendOwed), and said to be recorded again.
			e.log.Warn("cannot drop the recorded events of runs put away", "runs", len(batch), "error", err)
		}
	}
}

// statusEvents builds the status events of a step of st, numbers them and adds them to
// the Owed of the run and task runs the step writes, dropping from those what is known to
// be recorded. The step's write stores them; the caller publishes them once it is stored.
func (e *Engine) statusEvents(st *domain.State, m *domain.Machine) []Message {
	changed := m.Changed()
	runChanged, prevRun, prevPhase := m.RunChanged()
	recorded := e.recordedOf(st.Run.ID)
	idx := make([]int, 0, len(changed))
	for i := range changed {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var msgs []Message
	for _, i := range idx {
		t := st.Tasks[i]
		t.Owed = domain.Unrecorded(t.Owed, recorded)
		if t.Status == changed[i] {
			continue
		}
		if msg, ok := e.built(taskEvent(st, t, e.now())); ok {
			if o, ok := e.number(st.Run, &msg); ok {
				t.Owed, t.EventSeq = append(t.Owed, o), o.Seq
				msgs = append(msgs, msg)
			}
		}
	}
	st.Run.Owed = domain.Unrecorded(st.Run.Owed, recorded)
	if runChanged && (st.Run.Status != prevRun || st.Run.Phase != prevPhase) {
		if msg, ok := e.built(runEvent(st, e.now())); ok {
			if o, ok := e.number(st.Run, &msg); ok {
				st.Run.Owed = append(st.Run.Owed, o)
				msgs = append(msgs, msg)
			}
		}
	}
	return msgs
}

// taskEvents answers the task runs' events among msgs.
func taskEvents(msgs []Message) []Message {
	var out []Message
	for _, m := range msgs {
		if m.Event.Type() == events.TypeStatusTaskRun {
			out = append(out, m)
		}
	}
	return out
}

// number gives msg the run's next number and answers what is stored of it.
func (e *Engine) number(r *domain.Run, msg *Message) (domain.OwedEvent, bool) {
	seq := r.EventSeq + 1
	events.SetSeq(&msg.Event, seq)
	body, err := events.Marshal(msg.Event)
	if err != nil {
		e.log.Error("cannot keep a status event", "run", r.ID, "event", msg.Event.ID(), "error", err)
		return domain.OwedEvent{}, false
	}
	r.EventSeq = seq
	return domain.OwedEvent{Seq: seq, Body: body}, true
}

// unrecorded answers every event st holds that is not known to be recorded, in order.
func (e *Engine) unrecorded(st *domain.State) []domain.OwedEvent {
	recorded := e.recordedOf(st.Run.ID)
	owed := domain.Unrecorded(st.Run.Owed, recorded)
	for _, t := range st.Tasks {
		owed = append(owed, domain.Unrecorded(t.Owed, recorded)...)
	}
	slices.SortFunc(owed, func(a, b domain.OwedEvent) int { return int(a.Seq - b.Seq) })
	return owed
}

// putAwayOwed makes r, about to be put away with tasks, carry every event they owe
// (tasks no longer do), and marks it as owing when it does.
func (e *Engine) putAwayOwed(st *domain.State, r *domain.Run, tasks []*domain.TaskRun) {
	r.Owed = e.unrecorded(st)
	for _, t := range tasks {
		t.Owed = nil
	}
	if len(r.Owed) > 0 {
		e.owing(r.ID, r.Owed)
	}
}

// resend publishes owed, run's events, again, in order.
func (e *Engine) resend(run string, owed []domain.OwedEvent) {
	msgs := make([]Message, 0, len(owed))
	for _, o := range owed {
		ev, err := events.Unmarshal(o.Body)
		if err != nil {
			e.log.Error("cannot read an event a run owes", "run", run, "seq", o.Seq, "error", err)
			continue
		}
		msgs = append(msgs, Message{Topic: events.RunEvents, Key: run, Event: ev})
	}
	e.metrics.sent(run, msgs, e.now())
	e.pub.enqueue(msgs, nil)
}

// resendOwedLimit bounds the runs put away whose events one look sends again.
const resendOwedLimit = 500

// resendOwed sends again the events of the runs put away that were not said to be
// recorded within ResendOwed (all of them on this replica's first look), and marks them
// as owing here, so that what is said recorded is dropped.
func (e *Engine) resendOwed(ctx context.Context, now time.Time) {
	before := now.Add(-e.cfg.ResendOwed)
	if e.lastResend.IsZero() {
		before = now
	} else if now.Sub(e.lastResend) < min(e.cfg.ResendOwed, sweepEvery) {
		return
	}
	e.lastResend = now
	owed, err := e.runs.FindOwed(ctx, before, resendOwedLimit)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("cannot list the runs put away that owe events", "error", err)
		}
		return
	}
	for _, o := range owed {
		e.owing(o.Run, o.Owed)
		e.resend(o.Run, o.Owed)
		if err := e.runs.DelayOwed(ctx, o.Run, now); err != nil && ctx.Err() == nil {
			e.log.Warn("cannot record events sent again", "run", o.Run, "error", err)
		}
	}
	if len(owed) > 0 {
		e.log.Info("sent again the events of runs put away", "runs", len(owed))
	}
}

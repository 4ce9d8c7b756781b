// Package feed follows runs as they change, for the runs service's watch streams
// (GET /team/{team}/workflowrun/{id}/watch and the team's /workflowrun/watch).
//
// How a replica learns of changes made on any replica: every change a watcher can see
// (a run's or a task run's status or phase, with the results, gates and attempts that
// come with it, and an action opened or decided) is already published as a status event
// on the run events topic, once the change is stored. Each replica follows that topic in
// a consumer group of its own (as it follows the recorded events), so it hears of every
// run's changes, whichever replica made them, through one path. A signal in the process
// where the change is made would be a second path for the same fact, one that fires
// before the grouped write is acknowledged (a read then sees the old state) and that the
// other replicas need the topic for anyway; the topic costs a broker round trip (a few
// milliseconds) and is in order per run.
//
// A change of a run is a hint, not a state: the Hub reads the run once for all its
// watchers (one subscription per run watched on the replica) and hands each watcher the
// latest state. Changes heard while a read is under way, or within Gap after it, are
// read together at the end of it, so a change waits at most a read and Gap. A watcher
// that takes its states slowly is given the latest one, never a backlog. A replica with
// no watchers does nothing with what it hears but look the run up in an empty map.
//
// A team's stream works the same way per team (WithTeams, WatchTeam): a run changed is
// read once (its summary, as the search answers it) for all the team's watchers, each
// given the latest summary of each run changed since it last took them. A task run's
// event does not name the team: the team of runs heard of is remembered, and a run not
// heard of yet is read by each team watched, which keeps it if it is its own.
package feed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/view"
)

// State is one state of a run as its watchers are sent it.
type State struct {
	// Data is the run, with its task runs, as GET /workflowrun/{id} answers it (JSON).
	Data []byte
	// ID names the state: two reads of an unchanged run have the same ID (the durations
	// of what is running, which grow by themselves, are left out of it).
	ID string
	// Ended says the run ended (phase completed or finalized): no state follows.
	Ended bool
}

// StateOf renders v as its watchers are sent it.
func StateOf(v view.Run) (State, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return State{}, err
	}
	v.Duration = 0
	v.Tasks = append([]view.TaskRun(nil), v.Tasks...)
	for i := range v.Tasks {
		v.Tasks[i].Duration = 0
	}
	stable, err := json.Marshal(v)
	if err != nil {
		return State{}, err
	}
	sum := sha256.Sum256(stable)
	phase := domain.Phase(v.Phase)
	return State{Data: data, ID: hex.EncodeToString(sum[:12]), Ended: phase.Ended()}, nil
}

// Reader reads a run's current state; an error of kind not found says the run is gone.
type Reader func(ctx context.Context, run string) (State, error)

// Gap is how long after a read the changes heard meanwhile wait to be read together.
const Gap = 50 * time.Millisecond

// Resync is how often a watched run is read though no change was heard: a change whose
// event this replica never heard (it was published while the replica's consumer was
// joining, which starts at the topic's end) is seen within it. A state unchanged is not
// sent again.
const Resync = 10 * time.Second

// retryAfter is the wait before a failed read is tried again.
const retryAfter = time.Second

// ErrStopped ends the watches of a Hub that stopped (the service is shutting down).
var ErrStopped = errors.New("feed: the service is shutting down")

// Hub shares one subscription per watched run among its watchers.
type Hub struct {
	read Reader
	gap  time.Duration
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	stopped bool
	subs    map[string]*sub
	// teams serves teams' streams (WithTeams); nil serves none.
	teams *teams
}

// New makes a Hub reading runs with read; Run ends it. A zero gap means Gap.
func New(read Reader, gap time.Duration, log *slog.Logger) *Hub {
	if gap <= 0 {
		gap = Gap
	}
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{read: read, gap: gap, log: log, ctx: ctx, cancel: cancel, subs: map[string]*sub{}}
}

// Run serves watches until ctx ends, then ends them all (ErrStopped) and returns once
// their reads are done.
func (h *Hub) Run(ctx context.Context) error {
	<-ctx.Done()
	h.mu.Lock()
	h.stopped = true
	var ending []*Watcher
	for run, s := range h.subs {
		delete(h.subs, run)
		for w := range s.watchers {
			ending = append(ending, w)
		}
	}
	var teamsEnding []*TeamWatcher
	if h.teams != nil {
		for team, s := range h.teams.subs {
			delete(h.teams.subs, team)
			for w := range s.watchers {
				teamsEnding = append(teamsEnding, w)
			}
		}
	}
	h.mu.Unlock()
	h.cancel()
	for _, w := range ending {
		w.finish(ErrStopped)
	}
	for _, w := range teamsEnding {
		w.finish(ErrStopped)
	}
	h.wg.Wait()
	return nil
}

// Changed says run changed; its watchers, if any, are sent its new state (ChangedIn
// with its team not told).
func (h *Hub) Changed(run string) { h.ChangedIn(run, nil) }

// Watching says how many runs have watchers here.
func (h *Hub) Watching() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Watch subscribes to run's changes: states read after this call reach the watcher.
// Close it when done.
func (h *Hub) Watch(run string) *Watcher {
	w := &Watcher{watch: newWatch(), hub: h}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		w.err = ErrStopped
		close(w.done)
		return w
	}
	s := h.subs[run]
	if s == nil {
		s = &sub{run: run, dirty: make(chan struct{}, 1), stop: make(chan struct{}), watchers: map[*Watcher]struct{}{}}
		h.subs[run] = s
		h.wg.Add(1)
		go h.loop(s)
	}
	s.watchers[w] = struct{}{}
	w.sub = s
	return w
}

// leave takes w off its subscription, which ends with its last watcher.
func (h *Hub) leave(w *Watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := w.sub
	if s == nil {
		return
	}
	w.sub = nil
	delete(s.watchers, w)
	if len(s.watchers) == 0 && h.subs[s.run] == s {
		delete(h.subs, s.run)
		close(s.stop)
	}
}

// end ends s and every watch of it with err; a later Watch of its run subscribes anew.
func (h *Hub) end(s *sub, err error) {
	h.mu.Lock()
	if h.subs[s.run] == s {
		delete(h.subs, s.run)
	}
	ws := make([]*Watcher, 0, len(s.watchers))
	for w := range s.watchers {
		ws = append(ws, w)
	}
	h.mu.Unlock()
	for _, w := range ws {
		w.finish(err)
	}
}

// watchersOf answers s's watchers now.
func (h *Hub) watchersOf(s *sub) []*Watcher {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Watcher, 0, len(s.watchers))
	for w := range s.watchers {
		out = append(out, w)
	}
	return out
}

// loop reads s's run each time it changes, the changes of a read and the gap after it
// together, until its last watcher leaves or the hub stops.
func (h *Hub) loop(s *sub) {
	defer h.wg.Done()
	resync := time.NewTicker(Resync)
	defer resync.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-s.stop:
			return
		case <-s.dirty:
		case <-resync.C:
		}
		wait := h.gap
		st, err := h.read(h.ctx, s.run)
		switch {
		case err == nil:
			for _, w := range h.watchersOf(s) {
				w.offer(st)
			}
		case h.ctx.Err() != nil:
			return
		case isNotFound(err):
			// The run is gone (its team deleted): its watches end, cut short.
			h.end(s, err)
			return
		default:
			h.log.Warn("cannot read a watched run; trying again", "run", s.run, "error", err)
			wait = retryAfter
			s.touch()
		}
		if !h.pause(wait, s.stop) {
			return
		}
	}
}

// pause waits for wait, answering false if the hub or the subscription (stop) ends first.
func (h *Hub) pause(wait time.Duration, stop <-chan struct{}) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-h.ctx.Done():
		return false
	case <-stop:
		return false
	case <-t.C:
		return true
	}
}

func isNotFound(err error) bool { return apperr.KindOf(err) == apperr.KindNotFound }

// sub is one run's subscription.
type sub struct {
	run string
	// dirty holds a change not read yet.
	dirty chan struct{}
	// stop is closed when the last watcher leaves.
	stop chan struct{}
	// watchers are guarded by the hub's mu.
	watchers map[*Watcher]struct{}
}

func (s *sub) touch() {
	select {
	case s.dirty <- struct{}{}:
	default:
	}
}

// watch is what every watch has: a signal that it has something to give, and its end,
// once, with why. Its mu also guards what the watch holds for its client.
type watch struct {
	ready chan struct{}
	done  chan struct{}

	mu     sync.Mutex
	err    error
	closed bool
}

func newWatch() watch { return watch{ready: make(chan struct{}, 1), done: make(chan struct{})} }

// Ready is signalled when the watch has something to give.
func (w *watch) Ready() <-chan struct{} { return w.ready }

// Done is closed when the watch ends by itself: Err says why.
func (w *watch) Done() <-chan struct{} { return w.done }

// Err is why the watch ended (ErrStopped, or the run gone).
func (w *watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// signal says the watch has something to give.
func (w *watch) signal() {
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

func (w *watch) finish(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	if w.err == nil {
		w.err = err
	}
	close(w.done)
}

// Watcher is one watch of a run: the latest state read since it last took one.
type Watcher struct {
	watch
	hub *Hub
	sub *sub // guarded by the hub's mu
	// latest is guarded by mu.
	latest *State
}

// Next takes the latest state read since the last Next; false when none was.
func (w *Watcher) Next() (State, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.latest == nil {
		return State{}, false
	}
	st := *w.latest
	w.latest = nil
	return st, true
}

// Close ends the watch.
func (w *Watcher) Close() {
	w.hub.leave(w)
	w.finish(nil)
}

// offer makes st the state Next gives, in place of any not taken yet.
func (w *Watcher) offer(st State) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.latest = &st
	w.mu.Unlock()
	w.signal()
}

package feed

import (
	"context"
	"slices"
)

// Summary is a run's state as a team's stream sends it: the run as the runs search
// answers it (without its task runs).
type Summary struct {
	State
	// Run, Team, Workflow and Status are the run's, for routing and filters.
	Run, Team, Workflow, Status string
}

// SummaryReader reads a run's summary; an error of kind not found says the run is gone.
type SummaryReader func(ctx context.Context, run string) (Summary, error)

// maxTeamsOf bounds the runs whose team a hub remembers; past it, it forgets them all,
// which costs a read per team watched for each run heard of next.
const maxTeamsOf = 100_000

// teams follows the runs of teams: one subscription per team watched, each reading each
// changed run of its team once for all its watchers.
type teams struct {
	read SummaryReader

	// guarded by the Hub's mu
	subs map[string]*teamSub
	// teamOf remembers the team of runs heard of, for the changes that do not say it.
	teamOf map[string]string
}

// WithTeams makes the hub serve teams' streams too, reading runs' summaries with read.
func (h *Hub) WithTeams(read SummaryReader) *Hub {
	h.teams = &teams{read: read, subs: map[string]*teamSub{}, teamOf: map[string]string{}}
	return h
}

// ChangedIn says run changed; team, when not nil, tells its team (called only when some
// team is watched here). Its watchers and those of its team, if any, are sent its new
// state.
func (h *Hub) ChangedIn(run string, team func() string) {
	h.mu.Lock()
	s := h.subs[run]
	var targets []*teamSub
	if t := h.teams; t != nil && len(t.subs) > 0 {
		name, known := t.teamOf[run]
		if !known && team != nil {
			if name = team(); name != "" {
				if len(t.teamOf) >= maxTeamsOf {
					clear(t.teamOf)
				}
				t.teamOf[run], known = name, true
			}
		}
		switch {
		case known:
			if ts := t.subs[name]; ts != nil {
				targets = append(targets, ts)
			}
		default:
			// A run not heard of with its team: each team watched reads it, and keeps it if
			// it is its own.
			for _, ts := range t.subs {
				targets = append(targets, ts)
			}
		}
		for _, ts := range targets {
			ts.dirty[run] = struct{}{}
		}
	}
	h.mu.Unlock()
	if s != nil {
		s.touch()
	}
	for _, ts := range targets {
		ts.touch()
	}
}

// TeamFilter selects the runs a team's watcher is sent; empty lists select all.
type TeamFilter struct {
	Workflows, Statuses []string
	// None selects nothing (a workflow's token asking for another workflow's runs).
	None bool
}

func (f TeamFilter) selects(s Summary) bool {
	return !f.None && (len(f.Workflows) == 0 || slices.Contains(f.Workflows, s.Workflow)) &&
		(len(f.Statuses) == 0 || slices.Contains(f.Statuses, s.Status))
}

// WatchTeam subscribes to the changes of team's runs that f selects. Close it when done.
func (h *Hub) WatchTeam(team string, f TeamFilter) *TeamWatcher {
	w := &TeamWatcher{watch: newWatch(), hub: h, filter: f, latest: map[string]Summary{}}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped || h.teams == nil {
		w.err = ErrStopped
		close(w.done)
		return w
	}
	s := h.teams.subs[team]
	if s == nil {
		s = &teamSub{team: team, dirty: map[string]struct{}{}, wake: make(chan struct{}, 1), stop: make(chan struct{}),
			watchers: map[*TeamWatcher]struct{}{}}
		h.teams.subs[team] = s
		h.wg.Add(1)
		go h.teamLoop(s)
	}
	s.watchers[w] = struct{}{}
	w.sub = s
	return w
}

// teamLoop reads the changed runs of s's team, those of a read and the gap after it
// together, until its last watcher leaves or the hub stops.
func (h *Hub) teamLoop(s *teamSub) {
	defer h.wg.Done()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-s.stop:
			return
		case <-s.wake:
		}
		h.mu.Lock()
		runs := make([]string, 0, len(s.dirty))
		for run := range s.dirty {
			runs = append(runs, run)
		}
		clear(s.dirty)
		h.mu.Unlock()
		slices.Sort(runs) // run ids are time-ordered: older runs first
		wait := h.gap
		for _, run := range runs {
			sum, err := h.teams.read(h.ctx, run)
			switch {
			case err == nil:
				h.mu.Lock()
				if len(h.teams.teamOf) >= maxTeamsOf {
					clear(h.teams.teamOf)
				}
				h.teams.teamOf[run] = sum.Team
				var ws []*TeamWatcher
				if sum.Team == s.team {
					for w := range s.watchers {
						ws = append(ws, w)
					}
				}
				h.mu.Unlock()
				for _, w := range ws {
					w.offer(sum)
				}
			case h.ctx.Err() != nil:
				return
			case isNotFound(err):
				// Gone with its team: nothing to send.
			default:
				h.log.Warn("cannot read a run of a watched team; trying again", "run", run, "error", err)
				h.mu.Lock()
				s.dirty[run] = struct{}{}
				h.mu.Unlock()
				wait = retryAfter
				s.touch()
			}
		}
		if !h.pause(wait, s.stop) {
			return
		}
	}
}

// teamSub is one team's subscription.
type teamSub struct {
	team string
	// dirty are the runs changed and not read yet; watchers its watchers (the hub's mu).
	dirty    map[string]struct{}
	watchers map[*TeamWatcher]struct{}
	wake     chan struct{}
	stop     chan struct{}
}

func (s *teamSub) touch() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// TeamWatcher is one watch of a team's runs: the latest summary of each run changed since
// it last took them.
type TeamWatcher struct {
	watch
	hub    *Hub
	sub    *teamSub // guarded by the hub's mu
	filter TeamFilter
	// latest and order (the runs in the order they first changed) are guarded by mu.
	latest map[string]Summary
	order  []string
}

// Next takes the latest summary of each run changed since the last Next, in the order
// the runs first changed.
func (w *TeamWatcher) Next() []Summary {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Summary, 0, len(w.order))
	for _, run := range w.order {
		out = append(out, w.latest[run])
	}
	clear(w.latest)
	w.order = w.order[:0]
	return out
}

// Close ends the watch.
func (w *TeamWatcher) Close() {
	h := w.hub
	h.mu.Lock()
	if s := w.sub; s != nil {
		w.sub = nil
		delete(s.watchers, w)
		if len(s.watchers) == 0 && h.teams.subs[s.team] == s {
			delete(h.teams.subs, s.team)
			close(s.stop)
		}
	}
	h.mu.Unlock()
	w.finish(nil)
}

func (w *TeamWatcher) offer(s Summary) {
	if !w.filter.selects(s) {
		return
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	if _, ok := w.latest[s.Run]; !ok {
		w.order = append(w.order, s.Run)
	}
	w.latest[s.Run] = s
	w.mu.Unlock()
	w.signal()
}

package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Start starts queued run id of team when a concurrency slot is free, merging req into it
// first when given; started is false, and the run left queued (req merged still), when
// none is free.
func (e *Engine) Start(ctx context.Context, id, team string, req *domain.SubmitRequest) (started bool, err error) {
	limit, err := e.limits.MaxConcurrent(ctx, team)
	if err != nil {
		return false, err
	}
	ok, err := e.slots.AcquireSlot(ctx, team, id, limit)
	if err != nil {
		return false, err
	}
	if !ok {
		if req != nil {
			if err := e.Step(ctx, id, func(m *domain.Machine) error {
				if m.S.Run.Phase != domain.Queued {
					return PhaseError(&domain.ErrInvalidPhase{Run: id, Phase: m.S.Run.Phase, Status: m.S.Run.Status})
				}
				return merge(m, *req)
			}); err != nil {
				return false, err
			}
		}
		return false, nil
	}
	err = e.Step(ctx, id, func(m *domain.Machine) error {
		if req != nil {
			if err := merge(m, *req); err != nil {
				return err
			}
		}
		return PhaseError(m.Start())
	})
	if err != nil {
		if IsPhaseError(err) {
			// Started or ended meanwhile: whichever holds the slot keeps it.
			if r, ferr := e.runs.FindRun(ctx, id); ferr == nil && r.Phase.Ended() {
				_ = e.slots.ReleaseSlot(ctx, team, id)
			}
		}
		return false, err
	}
	return true, nil
}

func merge(m *domain.Machine, req domain.SubmitRequest) error {
	if err := m.S.Run.Merge(req); err != nil {
		return RequestError(err)
	}
	m.MarkRunChanged()
	return nil
}

// RequestError turns a domain request error into the contract's 400; other errors are
// returned as they are.
func RequestError(err error) error {
	var re *domain.ErrRequest
	if errors.As(err, &re) {
		e := apperr.New(apperr.WorkflowRunInvalidReq, "%s", re.Message)
		for field, msg := range re.Fields {
			e.Fields = append(e.Fields, apperr.FieldError{Field: field, Message: msg})
		}
		return e
	}
	return err
}

// kickQueued has a team's queued runs looked at soon, in the background. Kicks that come
// while a look is under way make one more look after it, not one each: a burst of
// submits or ends lists the runs in flight a few times, not once per run.
func (e *Engine) kickQueued(team string) {
	if !e.queued.maybe(team) {
		return // none held here since a look found none
	}
	e.queueMu.Lock()
	if e.queueLooks[team] != nil {
		*e.queueLooks[team] = true
		e.queueMu.Unlock()
		return
	}
	again := new(bool)
	e.queueLooks[team] = again
	e.queueMu.Unlock()
	e.spawn(func(ctx context.Context) {
		for {
			e.startQueued(ctx, team)
			e.queueMu.Lock()
			if !*again || ctx.Err() != nil {
				delete(e.queueLooks, team)
				e.queueMu.Unlock()
				return
			}
			*again = false
			e.queueMu.Unlock()
		}
	})
}

// startQueued starts a team's queued runs held by this replica, oldest first, while slots
// are free.
func (e *Engine) startQueued(ctx context.Context, team string) {
	look := e.queued.look(team)
	all, err := e.runs.ListInFlight(ctx, domain.InFlightFilter{Owners: []string{e.cfg.Replica}, Team: team, Queued: true})
	if err != nil {
		e.log.Warn("cannot list queued runs", "error", err)
		return
	}
	for _, a := range queuedOf(all, team, e.cfg.Replica) {
		started, err := e.Start(ctx, a.ID, a.Team, nil)
		gone := IsPhaseError(err) || apperr.HasReason(err, apperr.WorkflowRunNotFound)
		if err != nil && !gone {
			e.log.Warn("cannot start queued run", "run", a.ID, "error", err)
			return
		}
		if gone {
			_ = e.runs.SetQueued(ctx, a.ID, false)
			continue
		}
		if !started {
			return
		}
	}
	// Every run listed has started, or was gone: none is left queued here but those
	// marked since the look began.
	e.queued.none(team, look)
}

// queuedOf lists the queued runs of team held by owner, oldest first.
func queuedOf(all []domain.InFlight, team, owner string) []domain.InFlight {
	var out []domain.InFlight
	for _, a := range all {
		if a.Queued && a.Owner == owner && (team == "" || a.Team == team) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(x, y domain.InFlight) int {
		if c := x.Created.Compare(y.Created); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out
}

// queueMarks tells, per team, whether this replica may hold queued runs: a run is marked
// once it is stored queued here (created, or taken over from a dead replica), and a look
// that started every queued run it listed clears the team — unless a run was marked after
// the look began, which the listing may have missed. Until a team's first look, it may.
type queueMarks struct {
	mu sync.Mutex
	// marks counts the runs marked per team; empty is the count a look left the team at
	// with nothing queued.
	marks, empty map[string]uint64
}

// mark records that a run of team is stored queued here; call it once the run is stored,
// then kick (kickQueued).
func (q *queueMarks) mark(team string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.marks == nil {
		q.marks = map[string]uint64{}
	}
	q.marks[team]++
}

// maybe reports whether team may have queued runs here.
func (q *queueMarks) maybe(team string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	at, looked := q.empty[team]
	return !looked || at != q.marks[team]
}

// look answers where team's marks stand as a look begins.
func (q *queueMarks) look(team string) uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.marks[team]
}

// none records that a look begun at at left no queued run of team.
func (q *queueMarks) none(team string, at uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.marks[team] != at {
		return
	}
	if q.empty == nil {
		q.empty = map[string]uint64{}
	}
	q.empty[team] = at
}

package engine

import (
	"context"
	"errors"
	"slices"
	"strings"

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

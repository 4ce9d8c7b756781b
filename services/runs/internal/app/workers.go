package app

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/engine"
)

// Workers of `generic` tasks over HTTP. A worker works one queue of one team: it claims
// the queue's oldest attempt waiting (long-polling until one comes), beats for it, writes
// its log and ends it. Its claim is the runners' exactly-once claim of the task run, in the
// name of the queue and the worker (workerRunner): a beat, a log or an end for an attempt
// that is not that worker's, in that queue, is refused. A worker that stops beating loses
// the attempt once its lease lapses, and the attempt is retried as a runner's is.

const (
	// MaxClaimWait bounds how long a claim waits for an attempt.
	MaxClaimWait = 60 * time.Second
	// claimBatch is how many waiting attempts a claim looks at in one read.
	claimBatch = 8
	// claimLook is how often the claims waiting on a queue look at the store, one of them
	// at a time, for attempts another replica queued; those this replica dispatches are
	// handed to them at once.
	claimLook = 500 * time.Millisecond
)

// WorkerTiming is what a worker needs to keep its attempt: beat at least every Beat, or
// lose it after Lease.
type WorkerTiming struct {
	Beat, Lease time.Duration
}

// workerRunner is the runner a worker's claim records: the team's queue and the worker's
// own name, so that only a principal allowed to work that queue can speak for it.
func workerRunner(team, queue, worker string) string {
	return "queue:" + team + "/" + queue + "/" + worker
}

// checkWorker refuses a worker name that is empty, too long or holds control characters.
func checkWorker(worker string) error {
	if worker == "" || len(worker) > 200 || strings.ContainsFunc(worker, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return apperr.Invalid(apperr.WorkflowRunInvalidReq, "The worker's name is not valid.",
			apperr.FieldError{Field: "worker", Message: "1 to 200 printable characters naming this worker"})
	}
	return nil
}

// Timing answers how often a worker must beat and how long its attempt outlives silence.
func (a *App) Timing() WorkerTiming {
	lease := a.engine.Lease()
	return WorkerTiming{Beat: lease / 3, Lease: lease}
}

// ClaimQueued claims, for worker, the oldest attempt waiting in queue of team, waiting up
// to wait for one; nil when none came.
func (a *App) ClaimQueued(ctx context.Context, team, queue, worker string, wait time.Duration) (*events.TaskAttempt, error) {
	if a.queues == nil {
		return nil, apperr.New(apperr.WorkflowRunInvalidReq, "This instance serves no workers over HTTP.")
	}
	if err := checkWorker(worker); err != nil {
		return nil, err
	}
	until := a.now().Add(min(max(wait, 0), MaxClaimWait))
	runner := workerRunner(team, queue, worker)
	for {
		// Registered before the read: an attempt dispatched after it is handed to this
		// claim (claimed for it already when the dispatch could), one stored after it
		// wakes it.
		handed, woken, done := a.engine.AwaitQueued(team, queue, runner)
		if a.engine.LookAtQueue(team, queue, claimLook) {
			att, more, err := a.claimStored(ctx, team, queue, runner)
			if more {
				a.engine.QueueHasMore(team, queue)
			}
			if err != nil || att != nil {
				a.giveBack(ctx, runner, done())
				return att, err
			}
		}
		left := until.Sub(a.now())
		if left <= 0 {
			return a.leave(ctx, runner, done), nil
		}
		look := time.NewTimer(min(left, claimLook))
		select {
		case h := <-handed:
			done()
			look.Stop()
			if h.Claimed != nil {
				return h.Claimed, nil
			}
			att, err := a.claimQueued(ctx, h.Q, runner, !h.Stored)
			if err != nil || att != nil {
				return att, err
			}
			continue
		case <-ctx.Done():
		case <-woken:
		case <-look.C:
		}
		look.Stop()
		if att := a.leave(ctx, runner, done); att != nil || ctx.Err() != nil {
			return att, nil
		}
	}
}

// leave unregisters a claim of runner that stops waiting: an attempt claimed for it as it
// stopped is its answer while its worker still asks; anything else handed to it is given
// back.
func (a *App) leave(ctx context.Context, runner string, done func() *engine.Handoff) *events.TaskAttempt {
	h := done()
	if h != nil && h.Claimed != nil && ctx.Err() == nil {
		return h.Claimed
	}
	a.giveBack(ctx, runner, h)
	return nil
}

// claimStored claims the oldest attempt of the store's queue it can; more reports that
// others may wait there still.
func (a *App) claimStored(ctx context.Context, team, queue, runner string) (att *events.TaskAttempt, more bool, err error) {
	waiting, err := a.queues.FindQueued(ctx, team, queue, claimBatch)
	if err != nil {
		return nil, false, err
	}
	for k, q := range waiting {
		att, err := a.claimQueued(ctx, q, runner, false)
		if err != nil {
			return nil, k+1 < len(waiting), err
		}
		if att == nil {
			continue
		}
		// The others read go to the claims waiting here, one each, rather than each of
		// them reading the store again.
		rest := waiting[k+1:]
		for len(rest) > 0 && a.engine.HandStored(rest[0]) {
			rest = rest[1:]
		}
		return att, len(rest) > 0 || len(waiting) == claimBatch, nil
	}
	return nil, len(waiting) == claimBatch, nil
}

// giveBack returns an attempt handed to a claim of runner that did not take it: one
// claimed for it on dispatch is released (dispatched anew), another goes to the store's
// queue.
func (a *App) giveBack(ctx context.Context, runner string, h *engine.Handoff) {
	if h == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if h.Stored {
		// Still in the store's queue: the claims waiting read it again.
		a.engine.QueueHasMore(h.Q.Team, h.Q.Queue)
		return
	}
	if h.Claimed == nil {
		a.engine.Requeue(ctx, h.Q)
		return
	}
	run, i, attempt, _ := domain.ParseAttemptID(h.Q.ID)
	err := a.engine.Step(ctx, run, func(m *domain.Machine) error {
		if i >= len(m.S.Tasks) || !m.Release(i, attempt, runner) {
			return engine.ErrNoChange
		}
		return nil
	})
	if err != nil && !errors.Is(err, engine.ErrNoChange) {
		// Its lease brings it back.
		a.log.Warn("cannot release an attempt its claim did not take", "attempt", h.Q.ID, "error", err)
	}
}

// claimQueued claims q for runner and answers its attempt, or nil when q is no longer
// waiting (claimed by another worker, ended, cancelled), which leaves the store's queue.
// handed is an attempt handed to the claim rather than read from the store: one the claim
// cannot take for an error goes to the store's queue.
func (a *App) claimQueued(ctx context.Context, q domain.QueuedAttempt, runner string, handed bool) (*events.TaskAttempt, error) {
	run, i, attempt, ok := domain.ParseAttemptID(q.ID)
	var att events.TaskAttempt
	claimed := false
	err := errors.New("not a queued attempt")
	if ok {
		err = a.engine.Step(ctx, run, func(m *domain.Machine) error {
			if i >= len(m.S.Tasks) || m.S.Run.Team != q.Team {
				return engine.ErrNoChange
			}
			t := m.S.Tasks[i]
			if t.Type != tasktype.Generic || domain.Text(t.Params["queue"]) != q.Queue {
				return engine.ErrNoChange
			}
			// Only an attempt nobody holds: a claim asked again by its holder is granted
			// again by Claim, but two pollers of one worker must not both get it.
			if t.Status != domain.Ready || !m.Claim(i, attempt, runner) {
				return refusal(m, i, attempt)
			}
			var err error
			att, err = engine.WorkerAttempt(m.S, i, m.Now)
			claimed = err == nil
			return err
		})
	}
	switch {
	case err == nil && claimed:
		// Its step takes it out of the store's queue (Engine.queueEffects).
		return &att, nil
	case err == nil, errors.Is(err, engine.ErrNoChange), apperr.HasReason(err, apperr.WorkflowRunNotFound), !ok:
		if handed {
			return nil, nil
		}
		return nil, a.queues.DeleteQueued(ctx, q.ID)
	default:
		if handed {
			a.giveBack(ctx, runner, &engine.Handoff{Q: q})
		}
		return nil, err
	}
}

// WorkerBeat tells that worker still works attempt id of queue of team; cancel asks it to
// stop (its run or task was cancelled). An attempt that is not the worker's any more (it
// ended, timed out, or was lost to silence) is refused: the worker stops.
func (a *App) WorkerBeat(ctx context.Context, team, queue, id, worker string) (cancel bool, err error) {
	taskRun, attempt, err := parseWorkerAttempt(id, worker)
	if err != nil {
		return false, err
	}
	runner := workerRunner(team, queue, worker)
	cancel, ok, err := a.Heartbeat(ctx, taskRun, attempt, runner)
	if err != nil {
		return false, err
	}
	if !ok {
		// An attempt cancelled or timed out has ended, and holds no runner any more: its
		// worker is told to stop, not that it lost the attempt.
		if t, err := a.runs.FindTaskRun(ctx, taskRun); err == nil && t.Attempt == attempt &&
			(t.Status == domain.Cancelled || t.Status == domain.TimedOut) {
			return true, nil
		}
		return false, notTheWorkers(id, worker)
	}
	return cancel, nil
}

// WorkerLog appends text to the log of attempt id, as its chunk seq (from 0, each once: a
// chunk sent again is kept once).
func (a *App) WorkerLog(ctx context.Context, team, queue, id, worker string, seq int, text string) error {
	taskRun, attempt, err := parseWorkerAttempt(id, worker)
	if err != nil {
		return err
	}
	if seq < 0 {
		return apperr.Invalid(apperr.WorkflowRunInvalidReq, "The log chunk is not valid.", apperr.FieldError{Field: "seq", Message: "0 or more"})
	}
	if _, ok, err := a.Heartbeat(ctx, taskRun, attempt, workerRunner(team, queue, worker)); err != nil || !ok {
		if err != nil {
			return err
		}
		return notTheWorkers(id, worker)
	}
	return a.logs.AppendLog(ctx, taskRun, attempt, seq, text)
}

// WorkerEnd ends attempt id as its worker reports: succeeded with results, failed or
// cancelled with a message. An end said again is accepted again.
func (a *App) WorkerEnd(ctx context.Context, team, queue, id, worker string, status domain.Status, msg string, results map[string]string) error {
	taskRun, attempt, err := parseWorkerAttempt(id, worker)
	if err != nil {
		return err
	}
	switch status {
	case domain.Succeeded, domain.Failed, domain.Cancelled:
	default:
		return apperr.Invalid(apperr.WorkflowRunInvalidReq, "The attempt's end is not valid.",
			apperr.FieldError{Field: "status", Message: "one of succeeded, failed, cancelled"})
	}
	run, i, _ := domain.ParseTaskRunID(taskRun)
	runner := workerRunner(team, queue, worker)
	results, secret, err := a.openResults(results)
	if err != nil {
		return apperr.Invalid(apperr.WorkflowRunInvalidReq, "The attempt's results are not valid.", apperr.FieldError{Field: "results", Message: err.Error()})
	}
	ended := false
	err = a.engine.Step(ctx, run, func(m *domain.Machine) error {
		if i >= len(m.S.Tasks) {
			return engine.ErrNoChange
		}
		t := m.S.Tasks[i]
		if t.Attempt == attempt && t.Status.Terminal() {
			// Said again (its answer lost): the same end is accepted again, another refused
			// (the attempt was lost, or cancelled, meanwhile).
			ended = t.Status == status
			return engine.ErrNoChange
		}
		if m.EndedLate(i, attempt, runner, status, msg, results, secret) {
			// The lease took it from a worker whose beats did not get through, and
			// its retry is not claimed yet: the step is not run again.
			ended = true
			return nil
		}
		if t.Runner != runner || t.Attempt != attempt {
			if t.Attempt < attempt {
				return engine.ErrStale
			}
			return engine.ErrNoChange
		}
		if !m.Ended(i, attempt, status, msg, results, secret) {
			return refusal(m, i, attempt)
		}
		ended = true
		return nil
	})
	if errors.Is(err, engine.ErrNoChange) || err == nil {
		if !ended {
			return notTheWorkers(id, worker)
		}
		return nil
	}
	return err
}

// parseWorkerAttempt reads attempt id and checks worker's name.
func parseWorkerAttempt(id, worker string) (taskRun string, attempt int, err error) {
	if err := checkWorker(worker); err != nil {
		return "", 0, err
	}
	run, i, attempt, ok := domain.ParseAttemptID(id)
	if !ok {
		return "", 0, apperr.New(apperr.TaskRunNotFound, "Attempt '%s' was not found.", id)
	}
	return domain.TaskRunID(run, i), attempt, nil
}

func notTheWorkers(id, worker string) error {
	return apperr.New(apperr.WorkflowRunInvalidPhase, "Attempt '%s' is not worker '%s''s: it ended, or was lost when its lease lapsed.", id, worker)
}

// WorkerRelease gives attempt id back to its queue: the worker claimed it and will not
// work it (it is stopping). The attempt is claimed anew, counting no try. A release said
// again, or of an attempt no longer the worker's, is refused as not the worker's.
func (a *App) WorkerRelease(ctx context.Context, team, queue, id, worker string) error {
	taskRun, attempt, err := parseWorkerAttempt(id, worker)
	if err != nil {
		return err
	}
	run, i, _ := domain.ParseTaskRunID(taskRun)
	runner := workerRunner(team, queue, worker)
	released := false
	err = a.engine.Step(ctx, run, func(m *domain.Machine) error {
		if i >= len(m.S.Tasks) {
			return engine.ErrNoChange
		}
		if released = m.Release(i, attempt, runner); !released {
			return refusal(m, i, attempt)
		}
		return nil
	})
	if err != nil && !errors.Is(err, engine.ErrNoChange) {
		return err
	}
	if !released {
		return notTheWorkers(id, worker)
	}
	return nil
}

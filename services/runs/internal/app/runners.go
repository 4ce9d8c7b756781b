package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/engine"
)

// What runners ask and tell: they claim an attempt before executing it, beat while it
// runs and report its log and end over the broker.

// AttemptWithin bounds the work of one claim or heartbeat. A runner gives up on either
// after as long (libs/runsapi) and asks again, so work on it past then is wasted; and the
// HTTP server does not end a request's context when its client goes, so on a loaded store
// the abandoned requests would pile up behind the runners' retries, each holding a run's
// lock or a connection, and slow every request more.
const AttemptWithin = 5 * time.Second

// Claim gives a runner the current attempt of a task run; false when it is not to be had
// (claimed already, cancelled, overtaken by a retry).
func (a *App) Claim(ctx context.Context, taskRunID string, attempt int, runner string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, AttemptWithin)
	defer cancel()
	run, i, ok := domain.ParseTaskRunID(taskRunID)
	if !ok {
		return false, apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", taskRunID)
	}
	claimed := false
	err := a.engine.Step(ctx, run, func(m *domain.Machine) error {
		if i >= len(m.S.Tasks) {
			return apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", taskRunID)
		}
		if claimed = m.Claim(i, attempt, runner); !claimed {
			return refusal(m, i, attempt)
		}
		return nil
	})
	if errors.Is(err, engine.ErrNoChange) {
		return false, nil
	}
	return claimed, err
}

// refusal is why a claim or report of attempt of task i was refused: engine.ErrStale when
// the state in memory has not seen that attempt yet, so a fresher one might accept it,
// and engine.ErrNoChange otherwise. An attempt only moves forward (ready, running, ended,
// then the next attempt), so a refusal decided on a state that has seen it holds on any
// later state: repeated dispatches and reports cost no read of the store.
func refusal(m *domain.Machine, i, attempt int) error {
	if m.S.Tasks[i].Attempt < attempt {
		return engine.ErrStale
	}
	return engine.ErrNoChange
}

// Heartbeat records that runner still executes an attempt. cancel asks it to stop; ok is
// false when the attempt is no longer the runner's.
func (a *App) Heartbeat(ctx context.Context, taskRunID string, attempt int, runner string) (cancel, ok bool, err error) {
	ctx, stop := context.WithTimeout(ctx, AttemptWithin)
	defer stop()
	run, i, valid := domain.ParseTaskRunID(taskRunID)
	if !valid {
		return false, false, apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", taskRunID)
	}
	now := a.now()
	beat := domain.Heartbeat{Attempt: attempt, Runner: runner, At: now}
	// The replica that owns the run answers from memory, where it keeps the lease. The
	// beat is still stored once per beatEvery: a replica that loaded the run to apply a
	// claim or a report may tick it, and reads stored beats before calling a runner lost.
	if cancel, ok, known := a.beatInMemory(run, i, beat, true); known && ok {
		if !cancel && !a.stored.fresh(taskRunID, beat, a.beatEvery()) {
			if err := a.beats.SaveHeartbeat(ctx, taskRunID, beat); err != nil {
				return false, false, err
			}
			a.stored.remember(taskRunID, beat)
		}
		return cancel, true, nil
	}
	// Elsewhere the stored task run is the truth: the attempt may have moved on through
	// another replica. It is asked (and the beat stored, for the owner to read) once per
	// beatEvery of an attempt.
	if a.stored.fresh(taskRunID, beat, a.beatEvery()) {
		// Unless the run held here shows the attempt moved on: then ask the store.
		if cancel, ok, known := a.beatInMemory(run, i, beat, false); !known || ok {
			return cancel, true, nil
		}
	}
	t, err := a.runs.FindTaskRun(ctx, taskRunID)
	if err != nil {
		return false, false, err
	}
	if t.RunsAttempt(attempt, runner) {
		if err := a.beats.SaveHeartbeat(ctx, taskRunID, beat); err != nil {
			return false, false, err
		}
		a.stored.remember(taskRunID, beat)
		a.beatInMemory(run, i, beat, false)
		return false, true, nil
	}
	if t.Attempt == attempt && t.Runner == runner {
		// Still this runner's attempt, but no longer running: cancelled or timed out.
		return true, true, nil
	}
	return false, false, nil
}

// beatInMemory moves the lease of task i of run, when the engine holds the run (and owns
// it, if owned) and no step holds it: a heartbeat does not wait behind a step. known is
// false when it could not look.
func (a *App) beatInMemory(run string, i int, b domain.Heartbeat, owned bool) (cancel, ok, known bool) {
	known = a.engine.TryStep(run, func(m *domain.Machine, mine bool) bool {
		if i >= len(m.S.Tasks) || (owned && !mine) {
			return false
		}
		cancel, ok = m.Heartbeat(i, b.Attempt, b.Runner)
		return true
	})
	return cancel, ok, known
}

// beatEvery is how often an attempt's heartbeat is stored: often enough that a replica
// reading it (one that did not hear the runner itself) never finds it older than the lease.
func (a *App) beatEvery() time.Duration { return a.cfg.Engine.Lease / 4 }

// beatCache remembers when each attempt's heartbeat was last stored by this replica.
type beatCache struct {
	mu   sync.Mutex
	last map[string]domain.Heartbeat
}

// fresh reports whether b's attempt had a heartbeat stored within every.
func (c *beatCache) fresh(id string, b domain.Heartbeat, every time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	last, ok := c.last[id]
	return ok && last.Attempt == b.Attempt && last.Runner == b.Runner && b.At.Sub(last.At) < every
}

func (c *beatCache) remember(id string, b domain.Heartbeat) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]domain.Heartbeat{}
	}
	c.last[id] = b
}

// prune forgets heartbeats stored before cutoff.
func (c *beatCache) prune(cutoff time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, b := range c.last {
		if b.At.Before(cutoff) {
			delete(c.last, id)
		}
	}
}

// Report applies a runner's or worker's report on an attempt: a chunk of its log, or its
// end.
func (a *App) Report(ctx context.Context, u events.TaskUpdate) error {
	run, i, ok := domain.ParseTaskRunID(u.TaskRunID)
	if !ok {
		return nil
	}
	switch u.Kind {
	case events.UpdateLog:
		return a.logs.AppendLog(ctx, u.TaskRunID, u.Attempt, u.Seq, u.Log)
	case events.UpdateEnded:
		status := domain.Status(strings.ToLower(u.Status))
		switch status {
		case domain.Succeeded, domain.Failed, domain.TimedOut, domain.Cancelled:
		default:
			status = domain.Failed
		}
		results, secret, err := a.openResults(u.Results)
		msg := u.Message
		if err != nil && status == domain.Succeeded {
			status, msg = domain.Failed, err.Error()
		}
		err = a.engine.Step(ctx, run, func(m *domain.Machine) error {
			if i >= len(m.S.Tasks) {
				return engine.ErrNoChange
			}
			if !m.EndedLate(i, u.Attempt, u.Runner, status, msg, results, secret) && !m.Ended(i, u.Attempt, status, msg, results, secret) {
				return refusal(m, i, u.Attempt)
			}
			return nil
		})
		if errors.Is(err, engine.ErrNoChange) || apperr.HasReason(err, apperr.WorkflowRunNotFound) {
			return nil
		}
		return err
	}
	return nil
}

// openResults opens the results a runner sent sealed, because they hold a secret, and
// names them.
func (a *App) openResults(in map[string]string) (map[string]string, []string, error) {
	var secret []string
	out := in
	for name, v := range in {
		if !secrets.IsSealed(v) {
			continue
		}
		if a.box == nil {
			return nil, nil, fmt.Errorf("result '%s' is sealed and the runs service has no secret key", name)
		}
		plain, err := a.box.Open(v)
		if err != nil {
			return nil, nil, fmt.Errorf("result '%s': %w", name, err)
		}
		if secret == nil {
			out = maps.Clone(in)
		}
		out[name] = plain
		secret = append(secret, name)
	}
	return out, secret, nil
}

// Recorded takes in that run's status events numbered seqs are recorded for delivery:
// what the run keeps of them can go.
func (a *App) Recorded(run string, seqs []int64) {
	a.engine.Recorded(run, seqs)
}

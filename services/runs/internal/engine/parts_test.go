package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/memstore"
)

// halfStore is the in-memory store, but for the step trap picks it stores what the Mongo
// store does when another writer moves the run between the step's two writes: the step's
// task runs land, its run does not (the other writer's stays), and SaveStep answers
// ErrConflict with the task runs' versions moved.
type halfStore struct {
	*memstore.Store

	mu   sync.Mutex
	trap func(r *domain.Run, tasks []*domain.TaskRun, changed []int) bool
	// meanwhile is what the other writer does to the run, if anything.
	meanwhile func(r *domain.Run)
}

func (s *halfStore) SaveStep(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun, changed []int) error {
	s.mu.Lock()
	trapped := s.trap != nil && s.trap(r, tasks, changed)
	if trapped {
		s.trap = nil
	}
	s.mu.Unlock()
	if !trapped {
		return s.Store.SaveStep(ctx, r, tasks, changed)
	}
	other, err := s.FindRun(ctx, r.ID)
	if err != nil {
		return err
	}
	if err := s.Store.SaveStep(ctx, r, tasks, changed); err != nil {
		return err
	}
	other.Version = r.Version
	if s.meanwhile != nil {
		s.meanwhile(other)
	}
	if err := s.Store.SaveStep(ctx, other, tasks, nil); err != nil {
		return err
	}
	r.Version--
	return fmt.Errorf("save run %s: %w", r.ID, domain.ErrConflict)
}

// halfHarness is a harness whose replicas a and b store steps through a halfStore.
func halfHarness(t *testing.T) (*harness, *halfStore, *Engine, *Engine) {
	t.Helper()
	h := newHarness(t)
	half := &halfStore{Store: h.store}
	h.runs = half
	return h, half, h.start("a"), h.start("b")
}

// A step whose task runs were stored but not its run still gets done what it owes: the
// timer of a sleep it began, the action of an approval it began, whether the step was the
// owner's or another replica's (which loads the run without settling it).
func TestEngineStepStoredInPart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		next  string
		other bool
	}{
		{"owner begins a sleep", tasktype.Sleep, false},
		{"owner begins an approval", tasktype.Approval, false},
		{"another replica begins a sleep", tasktype.Sleep, true},
		{"another replica begins an approval", tasktype.Approval, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, half, a, b := halfHarness(t)
			var params map[string]any
			if tt.next == tasktype.Sleep {
				params = map[string]any{"duration": 1000}
			}
			run := h.submit(a, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
				task("g", tasktype.Approval, nil, "start"), task("next", tt.next, params, "g"), task("end", tasktype.End, nil, "next")}})
			act := h.openAction(run)
			half.mu.Lock()
			half.trap = func(r *domain.Run, tasks []*domain.TaskRun, changed []int) bool {
				return r.ID == run && slices.Contains(changed, 1) && tasks[1].Status == domain.Succeeded
			}
			half.mu.Unlock()
			stepper := a
			if tt.other {
				stepper = b
			}
			h.decide(stepper, act.ID, true)
			h.waitTask(run, "next", domain.Waiting)

			if tt.next == tasktype.Sleep {
				h.advance(2 * time.Second)
			} else {
				h.decide(a, h.actionOf(run, "next").ID, true)
			}
			h.ends(run, domain.Succeeded)
		})
	}
}

// actionOf waits for the action of run's task name and answers it.
func (h *harness) actionOf(run, name string) *domain.Action {
	h.t.Helper()
	var a *domain.Action
	require.Eventually(h.t, func() bool {
		list, err := h.store.FindRunActions(context.Background(), run)
		if err != nil {
			return false
		}
		for _, x := range list {
			if x.TaskName == name {
				a = x
				return true
			}
		}
		return false
	}, within, time.Millisecond, "action of task %s of %s", name, run)
	return a
}

// A callback kept for a task that had not begun, while the step beginning it was stored in
// part, is taken by the task: the other writer kept it in the run because it saw no task
// waiting for it, and the task's step never saw it kept.
func TestEngineCallbackKeptWhileItsTaskBegan(t *testing.T) {
	t.Parallel()
	for _, other := range []bool{false, true} {
		t.Run(fmt.Sprintf("decided by another replica %v", other), func(t *testing.T) {
			t.Parallel()
			h, half, a, b := halfHarness(t)
			run := h.submit(a, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
				task("g", tasktype.Approval, nil, "start"), task("hook", tasktype.EventWait, map[string]any{"topic": "go"}, "g"),
				task("end", tasktype.End, nil, "hook")}})
			act := h.openAction(run)
			half.mu.Lock()
			half.trap = func(r *domain.Run, tasks []*domain.TaskRun, changed []int) bool {
				return r.ID == run && slices.Contains(changed, 1) && tasks[1].Status == domain.Succeeded
			}
			half.meanwhile = func(r *domain.Run) {
				r.Callbacks = map[string]domain.Callback{"go": {Status: domain.Succeeded, Data: `{"n":1}`, At: h.clock.Now()}}
			}
			half.mu.Unlock()
			stepper := a
			if other {
				stepper = b
			}
			h.decide(stepper, act.ID, true)
			h.ends(run, domain.Succeeded)
			r, tasks := h.stored(run)
			require.False(t, r.AwaitingApproval)
			require.Equal(t, map[string]string{"data": `{"n":1}`}, tasks[2].Results)
		})
	}
}

// deadLocks refuses every lock write, as a replica that died before its writes does.
type deadLocks struct{ *memstore.Store }

func (deadLocks) UpdateLock(context.Context, string, string, func(*domain.Lock) error) (*domain.Lock, error) {
	return nil, fmt.Errorf("the replica died")
}

// What a step owes its gates is done by the replica that made the step; when that replica
// is not the run's owner and dies first, the owner does it: here a releaselock task's
// release, which nothing else would ever come back to.
func TestEngineGateEffectsOfAReplicaThatDied(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.start("a")
	h.locks = deadLocks{h.store}
	b := h.start("b")
	run := h.submit(a, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		task("lock", tasktype.AcquireLock, map[string]any{"key": "prod"}, "start"),
		task("hook", tasktype.EventWait, map[string]any{"topic": "go"}, "lock"),
		task("unlock", tasktype.ReleaseLock, map[string]any{"key": "prod"}, "hook"),
		task("end", tasktype.End, nil, "unlock")}})
	h.waitTask(run, "hook", domain.Waiting)
	h.callback(b, run, "go")
	// The owner may have released it already, when b's step had it settle the run.
	h.waitTask(run, "unlock", domain.Running, domain.Succeeded)
	h.stop("b")
	h.advance(time.Minute)
	h.ends(run, domain.Succeeded)
	locks, err := h.store.FindRunLocks(context.Background(), run)
	require.NoError(t, err)
	require.Empty(t, locks)
}

// deadArchive refuses to put runs away, as a replica that died before it did.
type deadArchive struct{ *memstore.Store }

func (deadArchive) Archive(context.Context, *domain.Run, []*domain.TaskRun) error {
	return fmt.Errorf("the replica died")
}

// A run that ends in a step of another replica than its owner is put away by that
// replica; when it dies first, the owner does it. Here the owner holds nothing that would
// bring it back to the run (it only waited on a callback, with no timer), so the step
// stores the run due for its owner, whose reconciler finds it.
func TestEngineEndOfAReplicaThatDied(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.start("a")
	h.runs = deadArchive{h.store}
	b := h.start("b")
	run := h.submit(a, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		task("hook", tasktype.EventWait, map[string]any{"topic": "go"}, "start"),
		task("end", tasktype.End, nil, "hook")}})
	h.waitTask(run, "hook", domain.Waiting)
	h.callback(b, run, "go")
	r, _ := h.stored(run)
	require.True(t, r.Phase.Ended(), "b ended the run")
	h.stop("b")
	h.advance(time.Minute)
	h.ends(run, domain.Succeeded)
}

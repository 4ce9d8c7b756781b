package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/memstore"
)

// gate is start → g → end.
func gate(typ string, params map[string]any) *domain.Definition {
	return &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		task("g", typ, params, "start"), task("end", tasktype.End, nil, "g")}}
}

// openAction waits for the action of run's task g and answers it.
func (h *harness) openAction(run string) *domain.Action {
	h.t.Helper()
	var a *domain.Action
	require.Eventually(h.t, func() bool {
		list, err := h.store.FindRunActions(context.Background(), run)
		if err != nil || len(list) == 0 {
			return false
		}
		a = list[0]
		return true
	}, within, time.Millisecond)
	return a
}

// decide stores person's vote on action id and applies it through e, as the use cases do.
func (h *harness) decide(e *Engine, id string, approved bool) {
	h.t.Helper()
	a, err := h.store.UpdateAction(context.Background(), id, func(a *domain.Action) error {
		return a.Decide(domain.Vote{By: domain.Actioner{ID: "ann", Name: "Ann"}, Approved: approved}, "", h.clock.Now())
	})
	require.NoError(h.t, err)
	require.NoError(h.t, e.ApplyDecision(context.Background(), a))
}

func TestEngineApprovals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.start("a")
	run := h.submit(e, gate(tasktype.Approval, nil))
	h.waitTask(run, "g", domain.Waiting)
	a := h.openAction(run)
	assert.Equal(t, domain.ActionSubmitted, a.Status)
	r, _ := h.stored(run)
	assert.True(t, r.AwaitingApproval)
	assert.False(t, e.held.holds(run), "a run that only waits is not kept in memory")

	h.decide(e, a.ID, true)
	h.ends(run, domain.Succeeded)
	// Published after the step that opened the action was stored, by the publisher.
	require.Eventually(t, func() bool { return h.pub.count(a.ID+"/submitted") > 0 }, within, time.Millisecond)
	assert.Equal(t, 1, h.pub.count(a.ID+"/submitted"), "a run parked here is loaded again without settling anew")
	// A decision applied again (the reconciler after a crash) changes nothing. The action
	// is marked applied after the decision is answered, not before.
	var again *domain.Action
	require.Eventually(t, func() bool {
		var err error
		again, err = h.store.FindAction(context.Background(), a.ID)
		return err == nil && again.Applied
	}, within, time.Millisecond)
	require.NoError(t, e.ApplyDecision(context.Background(), again))
	assert.Equal(t, "start=succeeded g=succeeded end=succeeded", h.statuses(run))
}

// A decision stored by a replica that died before applying it is applied by the
// reconciler, exactly once; the waiting run is taken over with its gate.
func TestEngineGateSurvivesTakeover(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.start("a")
	run := h.submit(a, gate(tasktype.Approval, map[string]any{"numberOfApprovers": 1}))
	act := h.openAction(run)
	h.stop("a")
	_, err := h.store.UpdateAction(context.Background(), act.ID, func(x *domain.Action) error {
		return x.Decide(domain.Vote{By: domain.Actioner{ID: "bob"}, Approved: true}, "", h.clock.Now())
	})
	require.NoError(t, err)
	h.clock.mu.Lock()
	h.clock.now = h.clock.now.Add(time.Minute)
	h.clock.mu.Unlock()
	h.start("b")
	h.ends(run, domain.Succeeded)
	require.Eventually(t, func() bool {
		back, err := h.store.FindAction(context.Background(), act.ID)
		return err == nil && back.Applied
	}, within, time.Millisecond, "marked applied once its run has it")
}

func TestEngineCallbackKeptAndTimeouts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.start("a")
	run := h.submit(e, gate(tasktype.EventWait, map[string]any{"topic": "done", "timeout": 5}))
	h.waitTask(run, "g", domain.Waiting)
	h.advance(5 * time.Minute)
	h.ends(run, domain.Failed)
	assert.Equal(t, "start=succeeded g=timedout end=succeeded", h.statuses(run), "the end is reached; the failure still fails the run")

	run = h.submit(e, gate(tasktype.Approval, map[string]any{"timeout": 1, "onTimeout": "approve"}))
	act := h.openAction(run)
	h.advance(time.Minute)
	h.ends(run, domain.Succeeded)
	require.Eventually(t, func() bool {
		back, err := h.store.FindAction(context.Background(), act.ID)
		return err == nil && back.Status == domain.ActionApproved
	}, within, time.Millisecond)
}

// Locks serve their waiters first come, first served, and a run that ends lets its lock go.
func TestEngineLocks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.start("a")
	def := &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		task("lock", tasktype.AcquireLock, map[string]any{"key": "prod"}, "start"),
		task("hold", tasktype.EventWait, map[string]any{"topic": "go"}, "lock"),
		task("unlock", tasktype.ReleaseLock, map[string]any{"key": "prod"}, "hold"),
		task("end", tasktype.End, nil, "unlock")}}
	var runs []string
	for range 3 {
		runs = append(runs, h.submit(e, clone(def)))
	}
	h.waitTask(runs[0], "lock", domain.Succeeded)
	for i, run := range runs {
		h.waitTask(run, "lock", domain.Succeeded)
		for _, later := range runs[i+1:] {
			_, tasks := h.stored(later)
			assert.Equal(t, domain.Waiting, tasks[1].Status, "run %d waits behind run %d", i+1, i)
		}
		h.callback(e, run, "go")
		h.ends(run, domain.Succeeded)
	}

	first, second := h.submit(e, clone(def)), h.submit(e, clone(def))
	h.waitTask(first, "lock", domain.Succeeded)
	h.waitTask(second, "lock", domain.Waiting)
	require.NoError(t, e.Cancel(context.Background(), first, "stop"))
	h.waitTask(second, "lock", domain.Succeeded)
}

// milliLocks keeps waiters' times to the millisecond, as the Mongo store does.
type milliLocks struct{ *memstore.Store }

func (s milliLocks) UpdateLock(ctx context.Context, team, key string, fn func(*domain.Lock) error) (*domain.Lock, error) {
	return s.Store.UpdateLock(ctx, team, key, func(l *domain.Lock) error {
		if err := fn(l); err != nil {
			return err
		}
		l.Holder.At = l.Holder.At.Truncate(time.Millisecond)
		for i := range l.Queue {
			l.Queue[i].At = l.Queue[i].At.Truncate(time.Millisecond)
		}
		return nil
	})
}

// A lock granted at once is recorded as told by the grant itself, not left to the
// reconciler, whatever precision the store keeps the waiter's time in.
func TestEngineGrantToldOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.locks = milliLocks{h.store}
	h.reconcile = time.Hour
	e := h.start("a")
	h.clock.mu.Lock()
	h.clock.now = h.clock.now.Add(123456 * time.Nanosecond)
	h.clock.mu.Unlock()
	run := h.submit(e, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		task("lock", tasktype.AcquireLock, map[string]any{"key": "prod"}, "start"),
		task("hold", tasktype.EventWait, map[string]any{"topic": "go"}, "lock"),
		task("end", tasktype.End, nil, "hold")}})
	h.waitTask(run, "lock", domain.Succeeded)
	require.Eventually(t, func() bool {
		untold, err := h.store.FindUntold(context.Background())
		return err == nil && len(untold) == 0
	}, within, time.Millisecond, "the grant recorded as told")
}

// A replica whose copy of a run in memory is behind the store (another replica stepped the
// run) decides a grant or a decision on the stored run, not on its copy: a lock granted is
// not let go, a decision not dropped, because the copy does not show the task waiting.
func TestEngineGatesDecideOnTheStoredRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		gate domain.TaskDef
	}{
		{"a grant", task("gate", tasktype.AcquireLock, map[string]any{"key": "prod"}, "hook")},
		{"a decision", task("gate", tasktype.Approval, nil, "hook")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			a := h.start("a")
			b := h.start("b")
			// The script keeps the run in a's memory, where the gate has not begun.
			run := h.submit(a, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
				script("s", "start"), task("hook", tasktype.EventWait, map[string]any{"topic": "go"}, "start"), tt.gate,
				task("hold", tasktype.EventWait, map[string]any{"topic": "done"}, "gate"), task("end", tasktype.End, nil, "s", "hold")}})
			h.waitTask(run, "hook", domain.Waiting)
			require.True(t, a.held.holds(run))
			h.callback(b, run, "go")
			ctx := context.Background()
			if tt.gate.Type == tasktype.AcquireLock {
				h.waitTask(run, "gate", domain.Succeeded)
				a.grant(ctx, domain.Grant{Team: "infra", Key: "prod", To: domain.Waiter{Run: run, Task: 3, Attempt: 1}})
				locks, err := h.store.FindRunLocks(ctx, run)
				require.NoError(t, err)
				require.Len(t, locks, 1, "the run still holds its lock")
				require.Equal(t, run, locks[0].Holder.Run)
				return
			}
			act := h.actionOf(run, "gate")
			stored, err := h.store.UpdateAction(ctx, act.ID, func(x *domain.Action) error {
				return x.Decide(domain.Vote{By: domain.Actioner{ID: "ann"}, Approved: true}, "", h.clock.Now())
			})
			require.NoError(t, err)
			require.NoError(t, a.ApplyDecision(ctx, stored))
			h.waitTask(run, "gate", domain.Succeeded)
		})
	}
}

// A child's end is given to its parent as stored, not to a copy in memory that does not
// show the parent's task waiting for the child (another replica began that task).
func TestEngineChildEndedOnTheStoredParent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.defs["child"] = &domain.Definition{Name: "child", Team: "infra", Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		task("end", tasktype.End, nil, "start")}}
	a := h.start("a")
	b := h.start("b")
	// The script keeps the parent in a's memory, where kid has not begun.
	parent := h.submit(a, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		script("s", "start"), task("hook", tasktype.EventWait, map[string]any{"topic": "go"}, "start"),
		task("kid", tasktype.RunWorkflow, map[string]any{"workflowRef": "child", "wait": true}, "hook"),
		task("end", tasktype.End, nil, "s", "kid")}})
	h.waitTask(parent, "hook", domain.Waiting)
	require.True(t, a.held.holds(parent))
	h.callback(b, parent, "go")
	h.waitTask(parent, "kid", domain.Succeeded)
	h.finish(a, parent, "s", 1, domain.Succeeded, nil)
	h.ends(parent, domain.Succeeded)
}

package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/memstore"
)

// countingStore counts the runs read back.
type countingStore struct {
	*memstore.Store
	reads atomic.Int64
}

func (s *countingStore) FindRun(ctx context.Context, id string) (*domain.Run, error) {
	s.reads.Add(1)
	return s.Store.FindRun(ctx, id)
}

// A replica takes up a run it parked without reading it back, unless another writer moved
// it meanwhile; the decision applies either way.
func TestEngineKeepsParkedRuns(t *testing.T) {
	t.Parallel()
	for _, moved := range []bool{false, true} {
		t.Run(map[bool]string{false: "unchanged", true: "moved meanwhile"}[moved], func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			counting := &countingStore{Store: h.store}
			h.runs = counting
			e := h.start("a")
			run := h.submit(e, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
				task("gate", tasktype.Approval, nil, "start"), task("end", tasktype.End, nil, "gate")}})
			act := h.openAction(run)
			require.Eventually(t, func() bool {
				e.parked.mu.Lock()
				defer e.parked.mu.Unlock()
				p := e.parked.m[run]
				return p != nil && p.st != nil
			}, within, time.Millisecond, "the run is parked with its state")
			if moved {
				r, err := h.store.FindRun(context.Background(), run)
				require.NoError(t, err)
				tasks, err := h.store.FindTaskRuns(context.Background(), r)
				require.NoError(t, err)
				require.NoError(t, h.store.SaveStep(context.Background(), r, tasks, nil))
			}
			before := counting.reads.Load()
			h.decide(e, act.ID, true)
			h.ends(run, domain.Succeeded)
			if !moved {
				// Read once when it is put away in the archive, not to take the decision.
				assert.LessOrEqual(t, counting.reads.Load()-before, int64(1))
			}
		})
	}
}

// Only the last keep parked runs keep their state; every one keeps its versions.
func TestParkedRunsKeepTheLastStates(t *testing.T) {
	t.Parallel()
	p := newParkedRuns(2)
	states := map[string]*domain.State{}
	for i, id := range []string{"a", "b", "c"} {
		states[id] = parkedState(int64(i), 1)
		p.put(id, states[id])
	}
	assert.Nil(t, p.takeState("a"), "the oldest lost its state")
	assert.True(t, p.take("a", states["a"].Run, states["a"].Tasks), "and kept its versions")
	assert.Same(t, states["b"], p.takeState("b"))
	assert.False(t, p.take("b", states["b"].Run, states["b"].Tasks), "taken with its state")
	p.drop("c")
	assert.Nil(t, p.takeState("c"), "dropped")
	assert.Zero(t, p.kept.Len())
}

// A run parked is taken up again without settling only when neither it nor any of its task
// runs moved since: a step stored in part moves its task runs alone.
func TestParkedRunsTakeOnlyWhatIsUnchanged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		run      int64
		tasks    []int64
		unmoved  bool
		withheld bool
	}{
		{name: "unchanged", run: 4, tasks: []int64{2, 2}, unmoved: true},
		{name: "run moved", run: 5, tasks: []int64{2, 2}},
		{name: "a task run moved, its run did not", run: 4, tasks: []int64{2, 3}},
		{name: "never parked", run: 4, tasks: []int64{2, 2}, withheld: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newParkedRuns(0)
			if !tt.withheld {
				p.put("r", parkedState(4, 2))
			}
			now := parkedState(tt.run, 0)
			for _, v := range tt.tasks {
				now.Tasks = append(now.Tasks, &domain.TaskRun{Version: v})
			}
			assert.Equal(t, tt.unmoved, p.take("r", now.Run, now.Tasks))
			assert.False(t, p.take("r", now.Run, now.Tasks), "taken once")
		})
	}
}

// A run whose step could not do all it owed (a lock not asked for) is not taken as parked
// until it is loaded and settled, whether the step parks it before the mark or after.
func TestParkedRunsOwed(t *testing.T) {
	t.Parallel()
	for _, parkFirst := range []bool{true, false} {
		t.Run(map[bool]string{true: "parked, then owed", false: "owed, then parked"}[parkFirst], func(t *testing.T) {
			t.Parallel()
			p := newParkedRuns(2)
			st := parkedState(3, 1)
			if parkFirst {
				p.put("r", st)
				p.owe("r")
			} else {
				p.owe("r")
				p.put("r", st)
			}
			assert.Nil(t, p.takeState("r"), "its state is not reused")
			assert.False(t, p.take("r", st.Run, st.Tasks), "it is settled on its next load")
			p.put("r", st)
			assert.True(t, p.take("r", st.Run, st.Tasks), "settled, it parks as before")
		})
	}
}

// parkedState is a run at version with two task runs at taskVersion (none when 0).
func parkedState(version, taskVersion int64) *domain.State {
	st := &domain.State{Run: &domain.Run{Version: version}}
	if taskVersion > 0 {
		st.Tasks = []*domain.TaskRun{{Version: taskVersion}, {Version: taskVersion}}
	}
	return st
}

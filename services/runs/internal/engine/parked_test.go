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

// A lone replica takes up a run it parked without reading it back, unless another writer
// moved it meanwhile; the decision applies either way.
func TestEngineAloneKeepsParkedRuns(t *testing.T) {
	t.Parallel()
	for _, moved := range []bool{false, true} {
		t.Run(map[bool]string{false: "unchanged", true: "moved meanwhile"}[moved], func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.alone = true
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

// Only the last keep parked runs keep their state; every one keeps its version.
func TestParkedRunsKeepTheLastStates(t *testing.T) {
	t.Parallel()
	p := newParkedRuns(2)
	states := map[string]*domain.State{"a": {}, "b": {}, "c": {}}
	for i, id := range []string{"a", "b", "c"} {
		p.put(id, int64(i), states[id])
	}
	assert.Nil(t, p.takeState("a"), "the oldest lost its state")
	assert.True(t, p.take("a", 0), "and kept its version")
	assert.Same(t, states["b"], p.takeState("b"))
	assert.False(t, p.take("b", 1), "taken with its state")
	p.put("c", 5, nil)
	assert.Nil(t, p.takeState("c"), "parked again without its state")
	assert.True(t, p.take("c", 5))
	assert.Zero(t, p.kept.Len())
}

package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// slowTakeOver is a run store on which taking a run over is slow: at the first, time
// passes, and the replica judged dead beats again meanwhile (it was slow, not dead).
type slowTakeOver struct {
	RunStore
	h      *harness
	victim string
	once   sync.Once
}

func (s *slowTakeOver) TakeOver(ctx context.Context, id, from, to string) (bool, error) {
	s.once.Do(func() {
		s.h.advance(6 * time.Second)
		_ = s.h.store.MarkAlive(ctx, s.victim, s.h.clock.Now())
	})
	return s.RunStore.TakeOver(ctx, id, from, to)
}

// A replica judged dead at the start of a reconcile, that beats again while its runs are
// being taken over one by one, keeps the runs not yet taken: the takeover reads the beats
// again once what it read is older than a beat.
func TestEngineSlowTakeoverSparesAReplicaThatBeatAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	slow := &slowTakeOver{RunStore: h.store, h: h, victim: "a"}
	h.runs = slow
	a := h.start("a")
	def := func() *domain.Definition {
		return &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil), script("work", "start"), task("end", tasktype.End, nil, "work")}}
	}
	runs := []string{h.submit(a, def()), h.submit(a, def())}
	for _, r := range runs {
		h.dispatched(r, "work", 1)
	}
	h.stop("a")
	h.advance(16 * time.Second)
	h.start("b")

	owners := func() map[string]int {
		out := map[string]int{}
		for _, id := range runs {
			r, _ := h.stored(id)
			require.NotNil(t, r)
			out[r.Owner]++
		}
		return out
	}
	require.Eventually(t, func() bool { return owners()["b"] >= 1 }, within, time.Millisecond, "b takes the first run over")
	// Through many reconciles of b (every 5 ms), a, alive again, keeps the other.
	assert.Never(t, func() bool { return owners()["b"] > 1 }, 300*time.Millisecond, 5*time.Millisecond)
	assert.Equal(t, map[string]int{"a": 1, "b": 1}, owners())
}

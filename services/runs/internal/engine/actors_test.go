package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/memstore"
)

// The steps of a run on one replica take turns, even when one puts the run out of memory
// while another waits for it: the one that comes next waits too, rather than stepping the
// run beside the waiter (each could then read the other's step half stored).
func TestEngineStepsOfARunTakeTurns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	listed := &listedStore{Store: h.store}
	h.runs = listed
	e := h.start("a")
	// The replica's first look at every run in flight loads those of its own out of
	// memory: done before the run exists, it takes no turn of the run's.
	require.Eventually(t, func() bool { return listed.lists.Load() > 0 }, within, time.Millisecond, "the first sweep")
	run := h.submit(e, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		task("hook", tasktype.EventWait, map[string]any{"topic": "go"}, "start"), task("end", tasktype.End, nil, "hook")}})
	require.Eventually(t, func() bool {
		e.parked.mu.Lock()
		defer e.parked.mu.Unlock()
		return e.parked.m[run] != nil
	}, within, time.Millisecond, "the run, waiting only, is put out of memory")
	// users is how many steps hold or wait for the run's actor.
	users := func() int {
		e.held.mu.Lock()
		defer e.held.mu.Unlock()
		if a, ok := e.held.m[run]; ok {
			return a.users
		}
		return 0
	}

	var inside, overlaps atomic.Int32
	// step runs a step that holds the run until let go, and says when it holds it.
	step := func(holds chan<- struct{}, letGo <-chan struct{}) func() error {
		return func() error {
			return e.Step(context.Background(), run, func(*domain.Machine) error {
				if inside.Add(1) > 1 {
					overlaps.Add(1)
				}
				defer inside.Add(-1)
				if holds != nil {
					close(holds)
				}
				if letGo != nil {
					<-letGo
				}
				// Nothing stored: the run, waiting only, is put out of memory.
				return ErrNoChange
			})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	run1 := func(fn func() error) { wg.Go(func() { errs <- fn() }) }

	firstHolds, letFirstGo := make(chan struct{}), make(chan struct{})
	secondHolds, letSecondGo := make(chan struct{}), make(chan struct{})
	letGo := func(ch chan struct{}) func() { return sync.OnceFunc(func() { close(ch) }) }
	letFirst, letSecond := letGo(letFirstGo), letGo(letSecondGo)
	// A test that fails midway lets its steps go before the replica is stopped.
	t.Cleanup(letFirst)
	t.Cleanup(letSecond)
	run1(step(firstHolds, letFirstGo))
	<-firstHolds
	run1(step(secondHolds, letSecondGo))
	require.Eventually(t, func() bool { return users() == 2 }, within, time.Millisecond, "the second step waits for the first")
	letFirst()
	<-secondHolds

	// The first step put the run out of memory; the third must still wait for the second.
	thirdRan := make(chan struct{})
	run1(step(thirdRan, nil))
	require.Eventually(t, func() bool {
		select {
		case <-thirdRan:
			return true
		default:
			return users() == 2
		}
	}, within, time.Millisecond, "the third step waits, or runs beside the second")
	letSecond()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.ErrorIs(t, err, ErrNoChange)
	}
	assert.Zero(t, overlaps.Load(), "two steps of the run ran side by side")
	_, held := e.held.cached(run)
	assert.False(t, held, "the run is out of memory once no step holds it")
}

// listedStore counts the lists of runs in flight read.
type listedStore struct {
	*memstore.Store
	lists atomic.Int32
}

func (s *listedStore) ListInFlight(ctx context.Context, f domain.InFlightFilter) ([]domain.InFlight, error) {
	list, err := s.Store.ListInFlight(ctx, f)
	s.lists.Add(1)
	return list, err
}

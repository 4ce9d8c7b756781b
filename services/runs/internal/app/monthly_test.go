package app_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/memstore"
)

// failingRuns is the in-memory store whose run creations fail when fail says so.
type failingRuns struct {
	*memstore.Store
	fail func() bool
}

var errStoreDown = errors.New("the store is down")

func (f *failingRuns) CreateRun(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun) error {
	if f.fail() {
		return errStoreDown
	}
	return f.Store.CreateRun(ctx, r, tasks)
}

// newCountingApp runs the use cases over an in-memory store whose run creations fail when
// fail says so, for team "infra" allowed max runs a month.
func newCountingApp(t *testing.T, max int, fail func() bool) (*app.App, *memstore.Store) {
	t.Helper()
	s := memstore.New()
	tc := limits
	tc.MaxMonthly = max
	a, _ := newAppOver(t, tc, app.Stores{Runs: &failingRuns{Store: s, fail: fail},
		Quotas: s, Keys: s, Heartbeats: s, Logs: s, Replicas: s, Actions: s, Locks: s})
	return a, s
}

func monthlyUsed(t *testing.T, s *memstore.Store) int {
	t.Helper()
	u, err := s.Usage(context.Background(), "infra", time.Now().UTC().Format("2006-01"))
	require.NoError(t, err)
	return u.Monthly
}

// A submit whose run cannot be stored after its quota check leaves the month's count as it
// was, whichever way the run was to be created: the team can still use its last run.
func TestFailedSubmitsDoNotUseTheQuota(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		workflow string
		start    bool
	}{
		{"queued", "script", false},
		{"started within the submit", "script", true},
		{"ended within the submit", "inline", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var down atomic.Bool
			down.Store(true)
			a, s := newCountingApp(t, 1, down.Load)
			for range 3 {
				_, _, err := submit(t, a, tt.workflow, "", tt.start)
				require.ErrorIs(t, err, errStoreDown)
			}
			assert.Zero(t, monthlyUsed(t, s), "failed submits count nothing")

			down.Store(false)
			_, created, err := submit(t, a, tt.workflow, "", tt.start)
			require.NoError(t, err, "the month's one run is still there")
			assert.True(t, created)
			assert.Equal(t, 1, monthlyUsed(t, s))
			_, _, err = submit(t, a, tt.workflow, "", tt.start)
			assert.True(t, apperr.HasReason(err, apperr.QuotaExceeded), "%v", err)
		})
	}
}

// Submits at once, every other one failing to store its run, never take the month past its
// limit, and leave the count equal to the runs created; the limit is then reached exactly.
func TestConcurrentSubmitsHoldTheMonthlyLimit(t *testing.T) {
	t.Parallel()
	const max = 5
	var calls atomic.Int64
	var failing atomic.Bool
	failing.Store(true)
	a, s := newCountingApp(t, max, func() bool { return failing.Load() && calls.Add(1)%2 == 0 })
	var created atomic.Int64
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			_, ok, err := submit(t, a, "script", "", false)
			if err == nil && ok {
				created.Add(1)
				return
			}
			assert.True(t, errors.Is(err, errStoreDown) || apperr.HasReason(err, apperr.QuotaExceeded), "%v", err)
		})
	}
	wg.Wait()
	require.LessOrEqual(t, created.Load(), int64(max))
	assert.EqualValues(t, created.Load(), monthlyUsed(t, s), "the count is the runs created")

	failing.Store(false)
	for created.Load() < max {
		_, _, err := submit(t, a, "script", "", false)
		require.NoError(t, err, "room left by the failed submits")
		created.Add(1)
	}
	_, _, err := submit(t, a, "script", "", false)
	assert.True(t, apperr.HasReason(err, apperr.QuotaExceeded), "%v", err)
	assert.Equal(t, max, monthlyUsed(t, s))
}

// A count whose submit died before storing its run is given back by the reconciler once
// it has been held past the grace, and not before; a count still held for the run that a
// later submit with the same idempotency key creates is that run's, counted once.
func TestCountsOfRunsNeverStoredAreGivenBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, s := newCountingApp(t, 10, func() bool { return false })
	month := time.Now().UTC().Format("2006-01")
	// Two submits died after counting: one without a key, one holding key release-7.
	ok, err := s.CountMonthly(ctx, "infra", month, "ghost", 10)
	require.NoError(t, err)
	require.True(t, ok)
	held, err := s.HoldKey(ctx, "infra/script/release-7", "keyed", time.Now())
	require.NoError(t, err)
	require.Equal(t, "keyed", held)
	ok, err = s.CountMonthly(ctx, "infra", month, "keyed", 10)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 2, monthlyUsed(t, s))

	// The key's submit is sent again: it creates the run under the held id and its count.
	v, created, err := submit(t, a, "script", "release-7", false)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, "keyed", v.ID)
	assert.Equal(t, 2, monthlyUsed(t, s), "the retried submit counts its run once")

	require.NoError(t, a.ReconcileMonthly(ctx, time.Now()))
	assert.Equal(t, 2, monthlyUsed(t, s), "within the grace a count may be a submit's in flight")
	require.NoError(t, a.ReconcileMonthly(ctx, time.Now().Add(app.HeldCountGrace+time.Minute)))
	assert.Equal(t, 1, monthlyUsed(t, s), "the ghost's count is given back, the stored run's kept")
	rest, err := s.HeldMonthly(ctx, time.Now().Add(app.HeldCountGrace+time.Minute))
	require.NoError(t, err)
	assert.Empty(t, rest)
}

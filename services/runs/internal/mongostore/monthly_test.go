package mongostore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Counts made at once, each then kept (its run stored) or given back, as submits do, leave
// the month counting exactly the runs kept, never past the limit, and hold none of them
// once settled; the room given back is then taken up to the limit exactly.
func TestConcurrentCountsKeptAndGivenBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	const max = 30
	var kept, counted atomic.Int64
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			run := fmt.Sprintf("r%d", i)
			ok, err := s.CountMonthly(ctx, "t", "2026-12", run, max)
			if !assert.NoError(t, err) || !ok {
				return
			}
			counted.Add(1)
			if i%3 == 0 {
				given, err := s.GiveBackMonthly(ctx, "t", "2026-12", run)
				assert.NoError(t, err)
				assert.True(t, given, run)
				return
			}
			kept.Add(1)
			assert.NoError(t, s.RunStored(ctx, "t", "2026-12", run))
		})
	}
	wg.Wait()
	require.NoError(t, s.SettleMonthly(ctx))
	assert.GreaterOrEqual(t, counted.Load(), int64(max), "counts given back made room for others")
	u, err := s.Usage(ctx, "t", "2026-12")
	require.NoError(t, err)
	assert.EqualValues(t, kept.Load(), u.Monthly)
	held, err := s.HeldMonthly(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Empty(t, held, "every count was kept or given back")

	for n := kept.Load(); n < max; n++ {
		ok, err := s.CountMonthly(ctx, "t", "2026-12", fmt.Sprintf("more%d", n), max)
		require.NoError(t, err)
		require.True(t, ok, "room left at %d", n)
	}
	ok, err := s.CountMonthly(ctx, "t", "2026-12", "one-too-many", max)
	require.NoError(t, err)
	assert.False(t, ok)
}

// A month's counter that holds nothing any more loses its held field at the next look,
// which then skips it; one holding a count keeps it.
func TestCountersHoldingNothingAreSkipped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := newStoreDB(t)
	for _, team := range []string{"idle", "busy"} {
		ok, err := s.CountMonthly(ctx, team, "2026-12", team+"-run", 5)
		require.NoError(t, err)
		require.True(t, ok)
	}
	require.NoError(t, s.RunStored(ctx, "idle", "2026-12", "idle-run"))
	require.NoError(t, s.SettleMonthly(ctx))
	withHeld := func() int64 {
		n, err := db.Collection("counters").CountDocuments(ctx, bson.M{"held": bson.M{"$exists": true}})
		require.NoError(t, err)
		return n
	}
	require.EqualValues(t, 2, withHeld())

	held, err := s.HeldMonthly(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, held, 1)
	assert.Equal(t, "busy-run", held[0].Run)
	assert.EqualValues(t, 1, withHeld(), "the idle month's empty field is dropped")
	u, err := s.Usage(ctx, "idle", "2026-12")
	require.NoError(t, err)
	assert.Equal(t, 1, u.Monthly, "its count stays")

	ok, err := s.CountMonthly(ctx, "idle", "2026-12", "idle-again", 5)
	require.NoError(t, err)
	require.True(t, ok)
	held, err = s.HeldMonthly(ctx, time.Now().Add(time.Hour))
	require.NoError(t, err)
	assert.Len(t, held, 2, "a count after the drop is held again")
}

package storetest

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/runs/internal/app"
)

// heldMonthly: a count is held from the write that makes it until its run is said stored
// (kept) or the count is given back (once); a count held is listed by when it was made,
// and counting a run held already adds nothing.
func heldMonthly(t *testing.T, s app.Stores) {
	ctx := context.Background()
	q := s.Quotas
	usage := func() int {
		u, err := q.Usage(ctx, "infra", "2026-11")
		require.NoError(t, err)
		return u.Monthly
	}
	held := func() []string {
		h, err := q.HeldMonthly(ctx, time.Now().Add(time.Hour))
		require.NoError(t, err)
		var runs []string
		for _, c := range h {
			if c.Team == "infra" {
				assert.Equal(t, "2026-11", c.Month)
				runs = append(runs, c.Run)
			}
		}
		sort.Strings(runs)
		return runs
	}
	for _, run := range []string{"r1", "r2", "r3"} {
		ok, err := q.CountMonthly(ctx, "infra", "2026-11", run, 3)
		require.NoError(t, err)
		require.True(t, ok, run)
	}
	assert.Equal(t, []string{"r1", "r2", "r3"}, held())
	h, err := q.HeldMonthly(ctx, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	assert.Empty(t, h, "none was held before an hour ago")

	require.NoError(t, q.RunStored(ctx, "infra", "2026-11", "r1"))
	require.NoError(t, q.SettleMonthly(ctx))
	assert.Equal(t, []string{"r2", "r3"}, held(), "a run stored is no longer held")

	given, err := q.GiveBackMonthly(ctx, "infra", "2026-11", "r2")
	require.NoError(t, err)
	assert.True(t, given)
	assert.Equal(t, 2, usage(), "a count given back is uncounted")
	given, err = q.GiveBackMonthly(ctx, "infra", "2026-11", "r2")
	require.NoError(t, err)
	assert.False(t, given, "a count is given back once")
	given, err = q.GiveBackMonthly(ctx, "infra", "2026-11", "r1")
	require.NoError(t, err)
	assert.False(t, given, "a stored run keeps its count")
	assert.Equal(t, 2, usage())

	// r3 is held: counting it again takes that count; r4 takes the room r2 left.
	ok, added, err := q.CountMonthlyOnce(ctx, "infra", "2026-11", "r3", 3)
	require.NoError(t, err)
	assert.Equal(t, [2]bool{true, false}, [2]bool{ok, added}, "r3 counted already")
	ok, added, err = q.CountMonthlyOnce(ctx, "infra", "2026-11", "r4", 3)
	require.NoError(t, err)
	assert.Equal(t, [2]bool{true, true}, [2]bool{ok, added}, "r4 counted now")
	ok, added, err = q.CountMonthlyOnce(ctx, "infra", "2026-11", "r5", 3)
	require.NoError(t, err)
	assert.Equal(t, [2]bool{false, false}, [2]bool{ok, added}, "no room for r5")
	ok, added, err = q.CountMonthlyOnce(ctx, "other", "2026-11", "o1", 3)
	require.NoError(t, err)
	assert.Equal(t, [2]bool{true, true}, [2]bool{ok, added}, "a month not counted yet")
	assert.Equal(t, 3, usage())
	assert.Equal(t, []string{"r3", "r4"}, held())

	// A run stored is unheld by the next count of its month, without a write of its own.
	require.NoError(t, q.RunStored(ctx, "infra", "2026-11", "r3"))
	given, err = q.GiveBackMonthly(ctx, "infra", "2026-11", "r4")
	require.NoError(t, err)
	require.True(t, given)
	ok, err = q.CountMonthly(ctx, "infra", "2026-11", "r6", 3)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []string{"r6"}, held())
	assert.Equal(t, 3, usage())
	require.NoError(t, q.RunStored(ctx, "infra", "2026-11", "r6"))
	require.NoError(t, q.SettleMonthly(ctx))
	assert.Empty(t, held())
}

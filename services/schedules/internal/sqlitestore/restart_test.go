package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
	"github.com/baton-flow/baton/services/schedules/internal/sqlitestore"
)

// A store opened again on its file finds every schedule as it was written, its params
// opened with the same key, and none of the claims of the process before: the file serves
// one replica, so they are a process's that is gone, and their schedules fire at once
// rather than when their leases lapse.
func TestReopened(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	box, err := secrets.FromString(key)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "schedules.db")
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	first, err := sqlitestore.Open(ctx, path, box)
	require.NoError(t, err)
	x := &domain.Schedule{ID: "x", Team: "ops", Name: "x", Workflow: "build", Type: domain.TypeCron, Status: domain.StatusActive,
		Cron: "* * * * *", Timezone: "UTC", Overlap: domain.OverlapAllow, Misfire: domain.MisfireFireOnce,
		Params: map[string]any{"token": "hunter2"}, Next: now.Add(time.Second), Created: now}
	require.NoError(t, first.CreateSchedule(ctx, x))
	got, err := first.ClaimDue(ctx, "r1/1", now.Add(2*time.Second), now, now.Add(time.Hour), 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.NoError(t, first.Close())

	second, err := sqlitestore.Open(ctx, path, box)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, second.Close()) })
	back, err := second.FindSchedule(ctx, "ops", "x")
	require.NoError(t, err)
	assert.Equal(t, x, back)
	held, err := second.Holds(ctx, "x", "r1/1")
	require.NoError(t, err)
	assert.False(t, held, "the claim of the process before is let go")
	again, err := second.ClaimDue(ctx, "r2/1", now.Add(2*time.Second), now, now.Add(time.Hour), 10)
	require.NoError(t, err)
	assert.Len(t, again, 1, "claimed at once, well within the lease of the process before")
}

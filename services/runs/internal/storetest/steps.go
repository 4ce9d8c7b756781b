package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// saveTasksIsConditional: SaveTasks stores task runs on their versions provided the run is
// still at the version it was read at, and refuses them all otherwise; the run's version
// in memory stays what the store holds (a store may move it, as SaveStep does).
func saveTasksIsConditional(t *testing.T, s app.Stores) {
	ctx := context.Background()
	r, tasks := newRun("run-1", "infra", 2)
	create(t, s, r, tasks)
	stale, err := s.Runs.FindRun(ctx, "run-1")
	require.NoError(t, err)
	staleTasks, err := s.Runs.FindTaskRuns(ctx, stale)
	require.NoError(t, err)

	tasks[0].Status = domain.Running
	require.NoError(t, s.Runs.SaveTasks(ctx, r, tasks, []int{0}))
	back, err := s.Runs.FindRun(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, back.Version, r.Version, "the run's version in memory is the stored one")
	got, err := s.Runs.FindTaskRun(ctx, tasks[0].ID)
	require.NoError(t, err)
	assert.Equal(t, domain.Running, got.Status)

	// Another writer moves the run: a step read before it is refused, task runs and all.
	r.StatusMessage = "moved"
	require.NoError(t, s.Runs.SaveStep(ctx, r, tasks, nil))
	if stale.Version != r.Version {
		staleTasks[1].Status = domain.Failed
		assert.ErrorIs(t, s.Runs.SaveTasks(ctx, stale, staleTasks, []int{1}), domain.ErrConflict)
		got, err = s.Runs.FindTaskRun(ctx, tasks[1].ID)
		require.NoError(t, err)
		assert.Equal(t, domain.Ready, got.Status, "nothing of a refused step is stored")
	}
	tasks[1].Status = domain.Running
	require.NoError(t, s.Runs.SaveTasks(ctx, r, tasks, []int{1}), "from the versions as they moved")
}

// stepsOfARunPutAway: a run put away is no longer in flight: a step of it is refused, it
// is neither queued nor taken over, and it reads back as archived.
func stepsOfARunPutAway(t *testing.T, s app.Stores) {
	ctx := context.Background()
	r, tasks := newRun("run-1", "infra", 1)
	create(t, s, r, tasks)
	stale, err := s.Runs.FindRun(ctx, "run-1")
	require.NoError(t, err)
	staleTasks, err := s.Runs.FindTaskRuns(ctx, stale)
	require.NoError(t, err)
	r.Status, r.Phase, r.EndTime = domain.Succeeded, domain.Completed, at.Add(time.Minute)
	tasks[0].Status = domain.Succeeded
	require.NoError(t, s.Runs.Archive(ctx, r, tasks))

	staleTasks[0].Status = domain.Failed
	assert.ErrorIs(t, s.Runs.SaveStep(ctx, stale, staleTasks, []int{0}), domain.ErrConflict, "a step of a run put away")
	took, err := s.Runs.TakeOver(ctx, "run-1", "replica-a", "replica-b")
	require.NoError(t, err)
	assert.False(t, took, "a run put away is no replica's")
	require.NoError(t, s.Runs.SetQueued(ctx, "run-1", true))
	back, err := s.Runs.FindRun(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, back.Owner)
	assert.False(t, back.Queued, "a run put away waits for no slot")
	assert.Equal(t, domain.Succeeded, back.Status)
	all, err := s.Runs.FindTaskRuns(ctx, back)
	require.NoError(t, err)
	assert.Equal(t, domain.Succeeded, all[0].Status, "its task runs as they were put away")
	live, err := s.Runs.HasLiveRuns(ctx, "infra")
	require.NoError(t, err)
	assert.False(t, live)
}

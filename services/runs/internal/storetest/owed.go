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

func owedEvents(seqs ...int64) []domain.OwedEvent {
	out := make([]domain.OwedEvent, len(seqs))
	for i, s := range seqs {
		out[i] = domain.OwedEvent{Seq: s, Body: []byte(`{"n":` + string(rune('0'+s)) + `}`)}
	}
	return out
}

func owedRuns(t *testing.T, s app.Stores, before time.Time) map[string][]domain.OwedEvent {
	t.Helper()
	found, err := s.Runs.FindOwed(context.Background(), before, 10)
	require.NoError(t, err)
	out := map[string][]domain.OwedEvent{}
	for _, o := range found {
		out[o.Run] = o.Owed
	}
	return out
}

// owedEventsKept: the status events a step owes are stored with it, in its run and task
// runs; a run put away keeps what it still owes, found by when it was last sent, until it
// is cleared.
func owedEventsKept(t *testing.T, s app.Stores) {
	ctx := context.Background()
	r, tasks := newRun("run-1", "infra", 3)
	create(t, s, r, tasks)
	tasks[1].Status, tasks[1].Owed, tasks[1].EventSeq = domain.Running, owedEvents(1), 1
	r.Owed, r.EventSeq = owedEvents(2), 2
	require.NoError(t, s.Runs.SaveStep(ctx, r, tasks, []int{1}))
	back, err := s.Runs.FindRun(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, owedEvents(2), back.Owed)
	assert.EqualValues(t, 2, back.EventSeq)
	all, err := s.Runs.FindTaskRuns(ctx, back)
	require.NoError(t, err)
	assert.Equal(t, owedEvents(1), all[1].Owed)
	assert.EqualValues(t, 1, all[1].EventSeq)
	assert.Empty(t, owedRuns(t, s, at.Add(time.Hour)), "a run in flight is not among those put away")

	ended := at.Add(time.Minute)
	r.Status, r.Phase, r.EndTime, r.Owed = domain.Succeeded, domain.Completed, ended, owedEvents(1, 2, 3)
	tasks[1].Owed = nil
	require.NoError(t, s.Runs.Archive(ctx, r, tasks))
	quick, quickTasks := newRun("quick", "infra", 1)
	quick.Status, quick.Phase, quick.EndTime, quick.Owed = domain.Succeeded, domain.Completed, ended, owedEvents(1)
	create(t, s, quick, quickTasks)
	done, doneTasks := newRun("done", "infra", 1)
	done.Status, done.Phase, done.EndTime = domain.Succeeded, domain.Completed, ended
	create(t, s, done, doneTasks)

	assert.Empty(t, owedRuns(t, s, ended), "not yet due")
	assert.Equal(t, map[string][]domain.OwedEvent{"run-1": owedEvents(1, 2, 3), "quick": owedEvents(1)},
		owedRuns(t, s, ended.Add(time.Second)), "due from their end")

	require.NoError(t, s.Runs.DelayOwed(ctx, "run-1", ended.Add(time.Hour)))
	assert.Equal(t, []string{"quick"}, keysOf(owedRuns(t, s, ended.Add(time.Minute))), "sent again later")

	require.NoError(t, s.Runs.ClearOwed(ctx, map[string]map[int64]bool{"run-1": {2: true}, "quick": {1: true}, "nope": {4: true}}))
	assert.Equal(t, map[string][]domain.OwedEvent{"run-1": owedEvents(1, 3)}, owedRuns(t, s, ended.Add(2*time.Hour)),
		"each event is cleared by its own number")
	require.NoError(t, s.Runs.ClearOwed(ctx, map[string]map[int64]bool{"run-1": {1: true, 3: true}}))
	assert.Empty(t, owedRuns(t, s, ended.Add(2*time.Hour)), "nothing owed once all is recorded")
	back, err = s.Runs.FindRun(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, back.Owed)
	assert.Equal(t, domain.Succeeded, back.Status)
}

func keysOf(m map[string][]domain.OwedEvent) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

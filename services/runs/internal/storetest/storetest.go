// Package storetest is the contract every store of the runs service keeps, as one suite of
// tests run against each implementation (the Mongo store, the SQLite one and the in-memory
// one): what the engine and the use cases rely on, whatever keeps the data.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// NewStores returns empty stores, of one implementation, for one test.
type NewStores func(t *testing.T) app.Stores

// Run runs the whole contract against the stores newStores makes.
func Run(t *testing.T, newStores NewStores) {
	tests := []struct {
		name string
		test func(t *testing.T, s app.Stores)
	}{
		{"runs are created once and read back whole", createAndFind},
		{"a run that ended within its first step is created in the archive", createEnded},
		{"a step is stored on the versions it was read at, or not at all", saveStepIsConditional},
		{"a step that leaves its run as stored is stored on the run's version, or not at all", saveTasksIsConditional},
		{"a run put away takes no step, no queue and no owner", stepsOfARunPutAway},
		{"archiving moves a run out of flight, and a run in the archive is finalized once", archiveAndFinalize},
		{"status events owed are stored with their step, and kept by a run put away until cleared", owedEventsKept},
		{"runs in flight are listed, queued, taken over and found by their tree", inFlight},
		{"searches page and filter runs in flight and ended together", searches},
		{"insights count, sum and rank the runs a filter selects", insights},
		{"slots are a set with a limit", slots},
		{"monthly counts stop at their limit and read as usage", monthly},
		{"a monthly count is held until its run is stored or the count given back", heldMonthly},
		{"an idempotency key names its run for its life", keys},
		{"replicas say when they were last alive", replicas},
		{"heartbeats are kept by task run", heartbeats},
		{"logs are read in order from a cursor, across attempts", logs},
		{"actions are created once and read back whole", createAndFindActions},
		{"an action is updated on the version it was read at, fn applied anew after a lost race", updateActionIsConditional},
		{"concurrent updates of an action are all kept", concurrentActionUpdates},
		{"a run's actions are listed oldest first, open or not", runActions},
		{"decisions not applied are found until applied", unappliedActions},
		{"action searches filter, sort both ways and page with exact totals", actionSearches},
		{"action counts sum a filter's open and decided actions", actionCounts},
		{"an action's form and values, secret ones too, read back as stored", actionValues},
		{"a lock absent is created, queued first come first served and removed once free", lockQueue},
		{"a lock is updated on the version it was read at, fn applied anew after a lost race", updateLockIsConditional},
		{"concurrent updates of a lock never lose a waiter", concurrentLockUpdates},
		{"a run's locks, held or waited for, are found", runLocks},
		{"a queue answers its attempts oldest first until they are deleted", queuedAttempts},
		{"a deleted team leaves nothing behind", deleteTeam},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.test(t, newStores(t))
		})
	}
}

// at is a time the stores keep exactly: UTC, to the millisecond.
var at = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// newRun builds a run of n script tasks, in flight on replica-a.
func newRun(id, team string, n int) (*domain.Run, []*domain.TaskRun) {
	def := &domain.Definition{Name: "build", Team: team, Version: 1}
	r := &domain.Run{ID: id, Team: team, Workflow: "build", WorkflowVersion: 1, Status: domain.Running, Phase: domain.PhaseRunning,
		Trigger: "manual", CreationDate: at, StartTime: at, Params: map[string]any{"who": "world"},
		Labels: map[string]string{"env": "prod"}, Definition: def, Tasks: n, Owner: "replica-a"}
	tasks := make([]*domain.TaskRun, n)
	for i := range tasks {
		def.Tasks = append(def.Tasks, domain.TaskDef{Name: fmt.Sprintf("t%d", i), Type: "script"})
		tasks[i] = &domain.TaskRun{ID: domain.TaskRunID(id, i), RunID: id, Index: i, Name: fmt.Sprintf("t%d", i),
			Type: "script", Status: domain.Ready, CreationDate: at}
	}
	return r, tasks
}

func create(t *testing.T, s app.Stores, r *domain.Run, tasks []*domain.TaskRun) {
	t.Helper()
	require.NoError(t, s.Runs.CreateRun(context.Background(), r, tasks))
}

func createAndFind(t *testing.T, s app.Stores) {
	ctx := context.Background()
	r, tasks := newRun("run-1", "infra", 3)
	create(t, s, r, tasks)

	got, err := s.Runs.FindRun(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, "infra", got.Team)
	assert.Equal(t, domain.Running, got.Status)
	assert.Equal(t, map[string]any{"who": "world"}, got.Params)
	assert.Equal(t, "replica-a", got.Owner)
	assert.Nil(t, got.Definition, "FindRun reads the run alone")
	assert.Nil(t, got.Workspaces, "a run without workspaces reads back without")
	def, err := s.Runs.FindDefinition(ctx, got)
	require.NoError(t, err)
	assert.Len(t, def.Tasks, 3)

	all, err := s.Runs.FindTaskRuns(ctx, got)
	require.NoError(t, err)
	require.Len(t, all, 3)
	for i, tr := range all {
		assert.Equal(t, domain.TaskRunID("run-1", i), tr.ID, "in definition order")
	}
	one, err := s.Runs.FindTaskRun(ctx, domain.TaskRunID("run-1", 2))
	require.NoError(t, err)
	assert.Equal(t, "t2", one.Name)

	_, err = s.Runs.FindRun(ctx, "nope")
	assert.True(t, apperr.HasReason(err, apperr.WorkflowRunNotFound), "%v", err)
	for _, id := range []string{"run-1.3", "nope.0", "garbage"} {
		_, err = s.Runs.FindTaskRun(ctx, id)
		assert.True(t, apperr.HasReason(err, apperr.TaskRunNotFound), "%s: %v", id, err)
	}
	again, againTasks := newRun("run-1", "infra", 3)
	assert.ErrorIs(t, s.Runs.CreateRun(ctx, again, againTasks), domain.ErrConflict, "a run is created once")
}

func createEnded(t *testing.T, s app.Stores) {
	ctx := context.Background()
	r, tasks := newRun("quick", "infra", 2)
	r.Status, r.Phase, r.EndTime = domain.Succeeded, domain.Completed, at.Add(time.Second)
	create(t, s, r, tasks)
	assert.Empty(t, r.Owner, "a run stored in the archive has no owner")

	inFlight, err := s.Runs.ListInFlight(ctx, domain.InFlightFilter{})
	require.NoError(t, err)
	assert.Empty(t, inFlight)
	got, err := s.Runs.FindRun(ctx, "quick")
	require.NoError(t, err)
	assert.Equal(t, domain.Completed, got.Phase)
	assert.Empty(t, got.Owner)
	all, err := s.Runs.FindTaskRuns(ctx, got)
	require.NoError(t, err)
	assert.Len(t, all, 2)
}

func saveStepIsConditional(t *testing.T, s app.Stores) {
	ctx := context.Background()
	r, tasks := newRun("run-1", "infra", 3)
	create(t, s, r, tasks)
	staleRun, err := s.Runs.FindRun(ctx, "run-1")
	require.NoError(t, err)
	stale, err := s.Runs.FindTaskRuns(ctx, staleRun)
	require.NoError(t, err)

	tasks[1].Status, tasks[1].Attempt, tasks[1].Runner = domain.Running, 1, "r1"
	require.NoError(t, s.Runs.SaveStep(ctx, r, tasks, []int{1}))

	stale[1].Status = domain.Failed
	assert.ErrorIs(t, s.Runs.SaveStep(ctx, staleRun, stale, []int{1}), domain.ErrConflict, "a stale task run must not be written")
	assert.ErrorIs(t, s.Runs.SaveStep(ctx, staleRun, stale, nil), domain.ErrConflict, "a stale run must not be written")
	got, err := s.Runs.FindTaskRun(ctx, tasks[1].ID)
	require.NoError(t, err)
	assert.Equal(t, domain.Running, got.Status)
	assert.True(t, got.RunsAttempt(1, "r1"))

	// The versions moved in memory: the next step from the same copy is stored.
	r.StatusMessage = "half way"
	tasks[1].Status = domain.Succeeded
	tasks[2].Status = domain.Running
	require.NoError(t, s.Runs.SaveStep(ctx, r, tasks, []int{1, 2}))
	back, err := s.Runs.FindRun(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, "half way", back.StatusMessage)
	assert.Equal(t, r.Version, back.Version)
	all, err := s.Runs.FindTaskRuns(ctx, back)
	require.NoError(t, err)
	assert.Equal(t, []domain.Status{domain.Ready, domain.Succeeded, domain.Running}, []domain.Status{all[0].Status, all[1].Status, all[2].Status})

	// A stopped run's step is stored too (its run first).
	r.Status, r.Phase, r.EndTime = domain.Cancelled, domain.Completed, at.Add(time.Minute)
	tasks[2].Status = domain.Cancelled
	require.NoError(t, s.Runs.SaveStep(ctx, r, tasks, []int{2}))
	got, err = s.Runs.FindTaskRun(ctx, tasks[2].ID)
	require.NoError(t, err)
	assert.Equal(t, domain.Cancelled, got.Status)
}

func archiveAndFinalize(t *testing.T, s app.Stores) {
	ctx := context.Background()
	r, tasks := newRun("run-1", "infra", 3)
	create(t, s, r, tasks)
	done, err := s.Runs.FinalizeArchived(ctx, "run-1")
	require.NoError(t, err)
	assert.False(t, done, "a run in flight is not in the archive")

	r.Status, r.Phase, r.EndTime = domain.Succeeded, domain.Completed, at.Add(time.Minute)
	require.NoError(t, s.Runs.Archive(ctx, r, tasks))
	require.NoError(t, s.Runs.Archive(ctx, r, tasks), "archiving again is harmless")
	inFlight, err := s.Runs.ListInFlight(ctx, domain.InFlightFilter{})
	require.NoError(t, err)
	assert.Empty(t, inFlight)
	back, err := s.Runs.FindRun(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, domain.Succeeded, back.Status)
	assert.Empty(t, back.Owner)
	all, err := s.Runs.FindTaskRuns(ctx, back)
	require.NoError(t, err)
	assert.Len(t, all, 3)
	_, err = s.Runs.FindDefinition(ctx, back)
	require.NoError(t, err, "the definition stays with the archived run")

	done, err = s.Runs.FinalizeArchived(ctx, "run-1")
	require.NoError(t, err)
	assert.True(t, done)
	done, err = s.Runs.FinalizeArchived(ctx, "run-1")
	require.NoError(t, err)
	assert.False(t, done, "finalized once")
	back, err = s.Runs.FindRun(ctx, "run-1")
	require.NoError(t, err)
	assert.Equal(t, domain.Finalized, back.Phase)
}

func inFlight(t *testing.T, s app.Stores) {
	ctx := context.Background()
	root, rootTasks := newRun("root", "infra", 1)
	create(t, s, root, rootTasks)
	child, childTasks := newRun("child", "infra", 1)
	child.Ancestors, child.Depth, child.Workflow = []string{"root"}, 1, "deploy"
	create(t, s, child, childTasks)
	grandchild, gcTasks := newRun("grandchild", "infra", 1)
	grandchild.Ancestors, grandchild.Depth = []string{"root", "child"}, 2
	grandchild.Status, grandchild.Phase = domain.Cancelled, domain.Completed
	create(t, s, grandchild, gcTasks) // ended at once: in the archive
	queued, queuedTasks := newRun("queued", "infra", 1)
	queued.Status, queued.Phase, queued.Queued = domain.NotStarted, domain.Queued, true
	create(t, s, queued, queuedTasks)

	list, err := s.Runs.ListInFlight(ctx, domain.InFlightFilter{})
	require.NoError(t, err)
	byID := map[string]domain.InFlight{}
	for _, f := range list {
		byID[f.ID] = f
	}
	require.Len(t, byID, 3)
	assert.Equal(t, []string{"root"}, byID["child"].Ancestors)
	assert.True(t, byID["queued"].Queued)
	assert.Equal(t, domain.Queued, byID["queued"].Phase)
	assert.Equal(t, "replica-a", byID["root"].Owner)
	assert.True(t, byID["root"].Created.Equal(at))

	owned := func(f domain.InFlightFilter) []string {
		t.Helper()
		list, err := s.Runs.ListInFlight(ctx, f)
		require.NoError(t, err)
		var ids []string
		for _, r := range list {
			ids = append(ids, r.ID)
		}
		slices.Sort(ids)
		return ids
	}
	assert.Equal(t, []string{"queued"}, owned(domain.InFlightFilter{Queued: true, Team: "infra"}))
	assert.Empty(t, owned(domain.InFlightFilter{Queued: true, Team: "other"}))
	assert.Equal(t, []string{"child"}, owned(domain.InFlightFilter{Children: true}))
	assert.Empty(t, owned(domain.InFlightFilter{Owners: []string{"replica-z"}}))
	assert.Len(t, owned(domain.InFlightFilter{Owners: []string{"replica-z", "replica-a"}}), 3)
	assert.Empty(t, owned(domain.InFlightFilter{WakeBefore: at.Add(time.Hour)}), "no wake stored")
	root.WakeAt = at.Add(30 * time.Minute)
	require.NoError(t, s.Runs.SaveStep(ctx, root, rootTasks, nil))
	assert.Equal(t, []string{"root"}, owned(domain.InFlightFilter{Owners: []string{"replica-a"}, WakeBefore: at.Add(time.Hour)}))
	assert.Empty(t, owned(domain.InFlightFilter{WakeBefore: at.Add(time.Minute)}))
	back, err := s.Runs.FindRun(ctx, "root")
	require.NoError(t, err)
	assert.True(t, back.WakeAt.Equal(root.WakeAt))

	require.NoError(t, s.Runs.SetQueued(ctx, "queued", false))
	took, err := s.Runs.TakeOver(ctx, "queued", "replica-b", "replica-c")
	require.NoError(t, err)
	assert.False(t, took, "only from the replica that holds it")
	took, err = s.Runs.TakeOver(ctx, "queued", "replica-a", "replica-c")
	require.NoError(t, err)
	assert.True(t, took)
	back, err = s.Runs.FindRun(ctx, "queued")
	require.NoError(t, err)
	assert.Equal(t, "replica-c", back.Owner)
	assert.False(t, back.Queued)
	assert.Greater(t, back.Version, queued.Version, "a takeover moves the version: a stale holder reloads")

	below, err := s.Runs.FindDescendants(ctx, "root")
	require.NoError(t, err)
	assert.Equal(t, []string{"child"}, below, "in flight and not completed")
	n, err := s.Runs.CountDescendants(ctx, "root")
	require.NoError(t, err)
	assert.EqualValues(t, 2, n, "in flight or ended")
	stopped, err := s.Runs.FindStopped(ctx, []string{"root", "child", "grandchild", "nope"})
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"grandchild": true}, stopped)

	unfinished, err := s.Runs.FindUnfinished(ctx, "infra", "")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"root", "child", "queued"}, unfinished)
	unfinished, err = s.Runs.FindUnfinished(ctx, "infra", "deploy")
	require.NoError(t, err)
	assert.Equal(t, []string{"child"}, unfinished)
	live, err := s.Runs.HasLiveRuns(ctx, "infra")
	require.NoError(t, err)
	assert.True(t, live)
	live, err = s.Runs.HasLiveRuns(ctx, "other")
	require.NoError(t, err)
	assert.False(t, live)
}

// searchRuns creates runs a..f of team infra, a minute apart: a, c, e in flight; b, d, f
// ended; and one run of another team.
func searchRuns(t *testing.T, s app.Stores) {
	for i, id := range []string{"a", "b", "c", "d", "e", "f"} {
		r, tasks := newRun(id, "infra", 1)
		r.CreationDate = at.Add(time.Duration(i) * time.Minute)
		r.StartTime = r.CreationDate
		if i%2 == 1 {
			r.Status, r.Phase, r.EndTime = domain.Succeeded, domain.Completed, r.StartTime.Add(time.Duration(i)*10*time.Second)
		}
		if id == "f" {
			r.Status, r.Workflow, r.Labels = domain.Failed, "deploy", map[string]string{"env": "dev"}
		}
		create(t, s, r, tasks)
	}
	other, tasks := newRun("x", "other", 1)
	create(t, s, other, tasks)
}

func ids(runs []*domain.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}

func searches(t *testing.T, s app.Stores) {
	ctx := context.Background()
	searchRuns(t, s)
	from, to := at.Add(time.Minute), at.Add(4*time.Minute)
	tests := []struct {
		name  string
		f     domain.RunFilter
		p     page.Request
		want  []string
		total int64
	}{
		{"all, oldest first", domain.RunFilter{Team: "infra"}, page.Request{Size: 10}, []string{"a", "b", "c", "d", "e", "f"}, 6},
		{"all, newest first", domain.RunFilter{Team: "infra"}, page.Request{Size: 10, Desc: true}, []string{"f", "e", "d", "c", "b", "a"}, 6},
		{"second page", domain.RunFilter{Team: "infra"}, page.Request{Number: 1, Size: 4}, []string{"e", "f"}, 6},
		{"past the end", domain.RunFilter{Team: "infra"}, page.Request{Number: 5, Size: 4}, []string{}, 6},
		{"statuses", domain.RunFilter{Team: "infra", Statuses: []string{"succeeded"}}, page.Request{Size: 10}, []string{"b", "d"}, 2},
		{"phases", domain.RunFilter{Team: "infra", Phases: []string{"running"}}, page.Request{Size: 10}, []string{"a", "c", "e"}, 3},
		{"workflows", domain.RunFilter{Team: "infra", Workflows: []string{"deploy"}}, page.Request{Size: 10}, []string{"f"}, 1},
		{"labels", domain.RunFilter{Team: "infra", Labels: map[string]string{"env": "prod"}}, page.Request{Size: 10}, []string{"a", "b", "c", "d", "e"}, 5},
		{"ids", domain.RunFilter{Team: "infra", IDs: []string{"c", "x"}}, page.Request{Size: 10}, []string{"c"}, 1},
		{"dates, both ends in", domain.RunFilter{Team: "infra", From: &from, To: &to}, page.Request{Size: 10}, []string{"b", "c", "d", "e"}, 4},
		{"excluded", domain.RunFilter{Team: "infra", Exclude: []string{"a", "f"}}, page.Request{Size: 10}, []string{"b", "c", "d", "e"}, 4},
		{"none", domain.RunFilter{Team: "infra", None: true}, page.Request{Size: 10}, []string{}, 0},
		{"triggers", domain.RunFilter{Team: "infra", Triggers: []string{"schedule"}}, page.Request{Size: 10}, []string{}, 0},
	}
	for _, tt := range tests {
		runs, total, err := s.Runs.FindRuns(ctx, tt.f, tt.p)
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, append([]string{}, ids(runs)...), tt.name)
		assert.Equal(t, tt.total, total, tt.name)
	}
	counts, err := s.Runs.CountRuns(ctx, domain.RunFilter{Team: "infra"})
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"running": 3, "succeeded": 2, "failed": 1}, nonZero(counts))
}

func nonZero(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func insights(t *testing.T, s app.Stores) {
	ctx := context.Background()
	searchRuns(t, s)
	now := at.Add(10 * time.Minute)
	in, err := s.Runs.Insight(ctx, domain.RunFilter{Team: "infra"}, now, 4)
	require.NoError(t, err)
	assert.EqualValues(t, 6, in.Total)
	assert.EqualValues(t, 3, in.Running)
	// Ended: 10 s, 30 s, 50 s; in flight since 0, 2 and 4 minutes: 600 s, 480 s, 360 s.
	assert.EqualValues(t, (10+30+50+600+480+360)*1000, in.TotalDuration)
	assert.EqualValues(t, (50+360)*1000/2, in.MedianDuration)
	got := make([]string, len(in.Runs))
	for i, r := range in.Runs {
		got[i] = r.ID
	}
	assert.Equal(t, []string{"f", "e", "d", "c"}, got, "the newest, newest first")
	assert.EqualValues(t, 50_000, in.Runs[0].Duration)
	assert.Equal(t, "deploy", in.Runs[0].Workflow)

	in, err = s.Runs.Insight(ctx, domain.RunFilter{Team: "infra", Statuses: []string{"succeeded"}}, now, 0)
	require.NoError(t, err)
	assert.EqualValues(t, 2, in.Total)
	assert.EqualValues(t, 20_000, in.MedianDuration)
	assert.Empty(t, in.Runs)
}

func slots(t *testing.T, s app.Stores) {
	ctx := context.Background()
	for _, step := range []struct {
		run  string
		want bool
	}{{"r1", true}, {"r1", true}, {"r2", true}, {"r3", false}} {
		ok, err := s.Quotas.AcquireSlot(ctx, "infra", step.run, 2)
		require.NoError(t, err)
		assert.Equal(t, step.want, ok, step.run)
	}
	n, err := s.Quotas.SlotsTaken(ctx, "infra")
	require.NoError(t, err)
	assert.Equal(t, 2, n, "acquiring twice holds one slot")
	require.NoError(t, s.Quotas.ReleaseSlot(ctx, "infra", "r1"))
	require.NoError(t, s.Quotas.ReleaseSlot(ctx, "infra", "r1"), "releasing twice is harmless")
	n, err = s.Quotas.SlotsTaken(ctx, "infra")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	ok, err := s.Quotas.AcquireSlot(ctx, "infra", "r3", 2)
	require.NoError(t, err)
	assert.True(t, ok)
	n, err = s.Quotas.SlotsTaken(ctx, "other")
	require.NoError(t, err)
	assert.Zero(t, n)
}

func monthly(t *testing.T, s app.Stores) {
	ctx := context.Background()
	for i, want := range []bool{true, true, false} {
		ok, err := s.Quotas.CountMonthly(ctx, "infra", "2026-11", fmt.Sprintf("r%d", i), 2)
		require.NoError(t, err)
		assert.Equal(t, want, ok, "run %d", i)
	}
	ok, err := s.Quotas.CountMonthly(ctx, "infra", "2026-12", "r3", 2)
	require.NoError(t, err)
	assert.True(t, ok, "each month counts anew")
	_, err = s.Quotas.AcquireSlot(ctx, "infra", "r1", 5)
	require.NoError(t, err)
	u, err := s.Quotas.Usage(ctx, "infra", "2026-11")
	require.NoError(t, err)
	assert.Equal(t, domain.QuotaUsage{Concurrent: 1, Monthly: 2}, u)
	u, err = s.Quotas.Usage(ctx, "other", "2026-11")
	require.NoError(t, err)
	assert.Equal(t, domain.QuotaUsage{}, u)
}

func keys(t *testing.T, s app.Stores) {
	ctx := context.Background()
	held, err := s.Keys.HoldKey(ctx, "infra/build/k", "r1", at)
	require.NoError(t, err)
	assert.Equal(t, "r1", held)
	held, err = s.Keys.HoldKey(ctx, "infra/build/k", "r2", at.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, "r1", held, "the key names its first run")
	late := at.Add(25 * time.Hour)
	held, err = s.Keys.HoldKey(ctx, "infra/build/k", "r3", late)
	require.NoError(t, err)
	assert.Equal(t, "r3", held, "an expired key is taken over")

	_, err = s.Keys.HoldKey(ctx, "infra/build/old", "r4", at)
	require.NoError(t, err)
	require.NoError(t, s.Keys.PurgeKeys(ctx, late))
	held, err = s.Keys.HoldKey(ctx, "infra/build/old", "r5", late)
	require.NoError(t, err)
	assert.Equal(t, "r5", held)
	held, err = s.Keys.HoldKey(ctx, "infra/build/k", "r6", late)
	require.NoError(t, err)
	assert.Equal(t, "r3", held, "a key in its life is not purged")
}

func replicas(t *testing.T, s app.Stores) {
	ctx := context.Background()
	require.NoError(t, s.Replicas.MarkAlive(ctx, "a", at))
	require.NoError(t, s.Replicas.MarkAlive(ctx, "b", at))
	require.NoError(t, s.Replicas.MarkAlive(ctx, "a", at.Add(time.Second)))
	seen, err := s.Replicas.Replicas(ctx)
	require.NoError(t, err)
	require.Len(t, seen, 2)
	assert.True(t, seen["a"].Equal(at.Add(time.Second)))
	require.NoError(t, s.Replicas.ForgetReplica(ctx, "b"))
	seen, err = s.Replicas.Replicas(ctx)
	require.NoError(t, err)
	assert.Len(t, seen, 1)
}

func heartbeats(t *testing.T, s app.Stores) {
	ctx := context.Background()
	_, found, err := s.Heartbeats.LastHeartbeat(ctx, "run-1.0")
	require.NoError(t, err)
	assert.False(t, found)
	require.NoError(t, s.Heartbeats.SaveHeartbeat(ctx, "run-1.0", domain.Heartbeat{Attempt: 1, Runner: "r1", At: at}))
	require.NoError(t, s.Heartbeats.SaveHeartbeat(ctx, "run-1.0", domain.Heartbeat{Attempt: 2, Runner: "r2", At: at.Add(time.Second)}))
	require.NoError(t, s.Heartbeats.SaveHeartbeat(ctx, "run-1.1", domain.Heartbeat{Attempt: 1, Runner: "r1", At: at.Add(-time.Hour)}))
	b, found, err := s.Heartbeats.LastHeartbeat(ctx, "run-1.0")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, 2, b.Attempt)
	assert.Equal(t, "r2", b.Runner)
	assert.True(t, b.At.Equal(at.Add(time.Second)))
	require.NoError(t, s.Heartbeats.PurgeHeartbeats(ctx, at.Add(-time.Minute)))
	_, found, err = s.Heartbeats.LastHeartbeat(ctx, "run-1.1")
	require.NoError(t, err)
	assert.False(t, found, "purged")
	_, found, err = s.Heartbeats.LastHeartbeat(ctx, "run-1.0")
	require.NoError(t, err)
	assert.True(t, found, "kept")
}

func logs(t *testing.T, s app.Stores) {
	ctx := context.Background()
	for _, c := range []struct {
		attempt, seq int
		text         string
	}{{1, 0, "a"}, {1, 1, "b"}, {1, 1, "B"}, {2, 0, "c"}} {
		require.NoError(t, s.Logs.AppendLog(ctx, "run-1.0", c.attempt, c.seq, c.text))
	}
	text, cur, err := s.Logs.ReadLog(ctx, "run-1.0", 1, domain.LogCursor{})
	require.NoError(t, err)
	assert.Equal(t, "ab", text, "a chunk stored twice is kept once")
	assert.Equal(t, domain.LogCursor{Attempt: 1, Seq: 2}, cur)
	text, cur, err = s.Logs.ReadLog(ctx, "run-1.0", 2, cur)
	require.NoError(t, err)
	assert.Equal(t, "c", text, "the next attempt, from where the last read stopped")
	require.NoError(t, s.Logs.AppendLog(ctx, "run-1.0", 2, 1, "d"))
	text, _, err = s.Logs.ReadLog(ctx, "run-1.0", 2, cur)
	require.NoError(t, err)
	assert.Equal(t, "d", text)
	text, _, err = s.Logs.ReadLog(ctx, "run-1.1", 1, domain.LogCursor{})
	require.NoError(t, err)
	assert.Empty(t, text)
}

func deleteTeam(t *testing.T, s app.Stores) {
	ctx := context.Background()
	for _, team := range []string{"infra", "other"} {
		r, tasks := newRun(team+"-run", team, 1)
		r.Status, r.Phase, r.EndTime = domain.Succeeded, domain.Completed, at.Add(time.Second)
		create(t, s, r, tasks)
		require.NoError(t, s.Logs.AppendLog(ctx, domain.TaskRunID(r.ID, 0), 1, 0, "out"))
		_, err := s.Quotas.CountMonthly(ctx, team, "2026-11", team+"-run", 10)
		require.NoError(t, err)
		_, err = s.Keys.HoldKey(ctx, team+"/build/k", r.ID, at)
		require.NoError(t, err)
	}
	for _, team := range []string{"infra", "other"} {
		run := team + "-run"
		a := newAction(run, 0, team)
		require.NoError(t, s.Actions.CreateAction(ctx, a))
		_, err := s.Actions.UpdateAction(ctx, a.ID, decide(domain.ActionApproved, at.Add(time.Minute)))
		require.NoError(t, err)
		_, err = s.Locks.UpdateLock(ctx, team, "deploy", acquire(waiter(run, 0)))
		require.NoError(t, err)
	}
	require.NoError(t, s.Runs.DeleteTeamRuns(ctx, "infra"))
	require.NoError(t, s.Quotas.DeleteTeamQuotas(ctx, "infra"))
	require.NoError(t, s.Keys.DeleteTeamKeys(ctx, "infra"))
	require.NoError(t, s.Actions.DeleteTeamActions(ctx, "infra"))
	require.NoError(t, s.Locks.DeleteTeamLocks(ctx, "infra"))

	_, err := s.Runs.FindRun(ctx, "infra-run")
	assert.True(t, apperr.HasReason(err, apperr.WorkflowRunNotFound), "%v", err)
	text, _, err := s.Logs.ReadLog(ctx, "infra-run.0", 1, domain.LogCursor{})
	require.NoError(t, err)
	assert.Empty(t, text)
	u, err := s.Quotas.Usage(ctx, "infra", "2026-11")
	require.NoError(t, err)
	assert.Zero(t, u.Monthly)
	held, err := s.Keys.HoldKey(ctx, "infra/build/k", "new", at)
	require.NoError(t, err)
	assert.Equal(t, "new", held)

	_, err = s.Runs.FindRun(ctx, "other-run")
	require.NoError(t, err, "another team's runs are kept")
	text, _, err = s.Logs.ReadLog(ctx, "other-run.0", 1, domain.LogCursor{})
	require.NoError(t, err)
	assert.Equal(t, "out", text)
	held, err = s.Keys.HoldKey(ctx, "other/build/k", "new", at)
	require.NoError(t, err)
	assert.Equal(t, "other-run", held)

	_, err = s.Actions.FindAction(ctx, newAction("infra-run", 0, "infra").ID)
	assert.True(t, apperr.HasReason(err, apperr.ActionNotFound), "%v", err)
	found, total, err := s.Actions.FindActions(ctx, domain.ActionFilter{Team: "infra"}, domain.ActionSort{}, page.Request{Size: 10})
	require.NoError(t, err)
	assert.Empty(t, found)
	assert.Zero(t, total)
	unapplied, err := s.Actions.FindUnapplied(ctx, at.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, []string{newAction("other-run", 0, "other").ID}, actionIDs(unapplied), "another team's decision is still owed")
	locks, err := s.Locks.FindRunLocks(ctx, "infra-run")
	require.NoError(t, err)
	assert.Empty(t, locks)
	l, err := s.Locks.UpdateLock(ctx, "infra", "deploy", func(*domain.Lock) error { return nil })
	require.NoError(t, err)
	assert.Zero(t, l.Version, "the lock is gone")

	_, err = s.Actions.FindAction(ctx, newAction("other-run", 0, "other").ID)
	require.NoError(t, err, "another team's actions are kept")
	locks, err = s.Locks.FindRunLocks(ctx, "other-run")
	require.NoError(t, err)
	assert.Len(t, locks, 1, "another team's locks are kept")
}

// errRefused is an error fn answers: nothing is stored.
var errRefused = errors.New("refused")

// newAction builds the open approval of task i of run (its first attempt), created i
// minutes after at.
func newAction(run string, i int, team string) *domain.Action {
	task := domain.TaskRunID(run, i)
	return &domain.Action{ID: domain.ActionID(task, 1), Team: team, Type: domain.ApprovalAction, Status: domain.ActionSubmitted,
		Workflow: "build", WorkflowName: "Build", RunID: run, TaskRunID: task, TaskName: fmt.Sprintf("t%d", i), Attempt: 1,
		Instructions: "Ship it?", Required: 1, Initiator: "user-0", CreationDate: at.Add(time.Duration(i) * time.Minute)}
}

func createAction(t *testing.T, s app.Stores, a *domain.Action) {
	t.Helper()
	require.NoError(t, s.Actions.CreateAction(context.Background(), a))
}

// vote is fn adding person's approving vote.
func vote(person string) func(*domain.Action) error {
	return func(a *domain.Action) error {
		a.Actioners = append(a.Actioners, domain.Actioner{ID: person, Name: person, Approved: true, Date: at})
		return nil
	}
}

// decide is fn deciding an action as status at decided.
func decide(status domain.ActionStatus, decided time.Time) func(*domain.Action) error {
	return func(a *domain.Action) error {
		a.Status, a.DecidedAt = status, decided
		return nil
	}
}

// apply is fn marking an action's decision taken.
func apply(a *domain.Action) error {
	a.Applied = true
	return nil
}

func actionIDs(actions []*domain.Action) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = a.ID
	}
	return out
}

func voters(a *domain.Action) []string {
	out := make([]string, len(a.Actioners))
	for i, v := range a.Actioners {
		out[i] = v.ID
	}
	return out
}

// retryConflicts calls f until it answers something else than a lost race, as the
// engine would.
func retryConflicts(f func() error) error {
	for {
		if err := f(); !errors.Is(err, domain.ErrConflict) {
			return err
		}
	}
}

func createAndFindActions(t *testing.T, s app.Stores) {
	ctx := context.Background()
	a := newAction("run-1", 2, "infra")
	a.ApproverGroup, a.Required = "ops", 2
	a.Actioners = []domain.Actioner{{ID: "u1", Name: "Ann", Email: "ann@example.com", Approved: true, Comments: "fine", Date: at.Add(time.Minute)}}
	createAction(t, s, a)

	got, err := s.Actions.FindAction(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, a, got)

	again := *newAction("run-1", 2, "infra")
	again.Instructions = "Something else"
	require.NoError(t, s.Actions.CreateAction(ctx, &again), "creating again is harmless")
	got, err = s.Actions.FindAction(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, "Ship it?", got.Instructions, "the first one is kept")
	assert.Equal(t, a.Actioners, got.Actioners)

	_, err = s.Actions.FindAction(ctx, "nope")
	assert.True(t, apperr.HasReason(err, apperr.ActionNotFound), "%v", err)
}

func updateActionIsConditional(t *testing.T, s app.Stores) {
	ctx := context.Background()
	a := newAction("run-1", 0, "infra")
	createAction(t, s, a)

	calls := 0
	got, err := s.Actions.UpdateAction(ctx, a.ID, func(x *domain.Action) error {
		calls++
		if calls == 1 {
			// Another writer moves first, between this read and its write.
			_, err := s.Actions.UpdateAction(ctx, a.ID, vote("bob"))
			require.NoError(t, err)
		}
		return vote("ann")(x)
	})
	require.NoError(t, err)
	assert.Equal(t, 2, calls, "fn is applied again to the action as the other writer left it")
	assert.Equal(t, []string{"bob", "ann"}, voters(got))
	back, err := s.Actions.FindAction(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"bob", "ann"}, voters(back))
	assert.Equal(t, got.Version, back.Version, "the answer is the action as stored")
	assert.Greater(t, back.Version, a.Version)

	_, err = s.Actions.UpdateAction(ctx, a.ID, func(x *domain.Action) error {
		x.Status = domain.ActionApproved
		return errRefused
	})
	assert.ErrorIs(t, err, errRefused)
	again, err := s.Actions.FindAction(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, back, again, "fn's error stores nothing")

	_, err = s.Actions.UpdateAction(ctx, "nope", func(*domain.Action) error {
		t.Error("fn is not applied to an action that is not there")
		return nil
	})
	assert.True(t, apperr.HasReason(err, apperr.ActionNotFound), "%v", err)
}

func concurrentActionUpdates(t *testing.T, s app.Stores) {
	ctx := context.Background()
	a := newAction("run-1", 0, "infra")
	createAction(t, s, a)
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = retryConflicts(func() error {
				_, err := s.Actions.UpdateAction(ctx, a.ID, vote(fmt.Sprintf("u%d", i)))
				return err
			})
		})
	}
	wg.Wait()
	want := make([]string, n)
	for i := range n {
		require.NoError(t, errs[i])
		want[i] = fmt.Sprintf("u%d", i)
	}
	back, err := s.Actions.FindAction(ctx, a.ID)
	require.NoError(t, err)
	assert.ElementsMatch(t, want, voters(back))
}

func runActions(t *testing.T, s app.Stores) {
	ctx := context.Background()
	for _, i := range []int{2, 0, 1} {
		createAction(t, s, newAction("run-1", i, "infra"))
	}
	createAction(t, s, newAction("run-2", 0, "infra"))
	_, err := s.Actions.UpdateAction(ctx, newAction("run-1", 1, "infra").ID, decide(domain.ActionRejected, at.Add(time.Hour)))
	require.NoError(t, err)

	got, err := s.Actions.FindRunActions(ctx, "run-1")
	require.NoError(t, err)
	want := []string{newAction("run-1", 0, "").ID, newAction("run-1", 1, "").ID, newAction("run-1", 2, "").ID}
	assert.Equal(t, want, actionIDs(got))
	assert.Equal(t, domain.ActionRejected, got[1].Status, "decided ones too")
	got, err = s.Actions.FindRunActions(ctx, "nope")
	require.NoError(t, err)
	assert.Empty(t, got)
}

func unappliedActions(t *testing.T, s app.Stores) {
	ctx := context.Background()
	id := func(i int) string { return newAction("run-1", i, "infra").ID }
	for i := range 4 {
		createAction(t, s, newAction("run-1", i, "infra"))
	}
	// Created decided, not applied.
	created := newAction("run-1", 4, "infra")
	created.Status, created.DecidedAt, created.Reason = domain.ActionCancelled, at.Add(3*time.Minute), "timed out"
	createAction(t, s, created)
	for _, u := range []struct {
		i  int
		fn func(*domain.Action) error
	}{
		// 0 stays open.
		{1, decide(domain.ActionApproved, at.Add(2*time.Minute))},
		{2, decide(domain.ActionRejected, at.Add(time.Minute))},
		{2, apply},
		{3, decide(domain.ActionApproved, at.Add(10*time.Minute))}, // after the cutoff
	} {
		_, err := s.Actions.UpdateAction(ctx, id(u.i), u.fn)
		require.NoError(t, err)
	}
	cutoff := at.Add(5 * time.Minute)
	got, err := s.Actions.FindUnapplied(ctx, cutoff)
	require.NoError(t, err)
	assert.Equal(t, []string{id(1), id(4)}, actionIDs(got), "decided before the cutoff, not applied, oldest decision first")

	_, err = s.Actions.UpdateAction(ctx, id(1), apply)
	require.NoError(t, err)
	got, err = s.Actions.FindUnapplied(ctx, cutoff)
	require.NoError(t, err)
	assert.Equal(t, []string{id(4)}, actionIDs(got))
	got, err = s.Actions.FindUnapplied(ctx, at.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, []string{id(4), id(3)}, actionIDs(got))
}

// searchActions creates actions a..f of team infra, a minute apart, and one of another
// team; it answers the label of each id.
func searchActions(t *testing.T, s app.Stores) map[string]string {
	ctx := context.Background()
	labels := map[string]string{}
	for i, spec := range []struct {
		label        string
		typ          domain.ActionType
		status       domain.ActionStatus
		workflow     string
		workflowName string
	}{
		{"a", domain.ApprovalAction, domain.ActionSubmitted, "build", "Build"},
		{"b", domain.ManualAction, domain.ActionSubmitted, "deploy", "Deploy"},
		{"c", domain.ApprovalAction, domain.ActionApproved, "build", "Build"},
		{"d", domain.ApprovalAction, domain.ActionRejected, "deploy", "Deploy"},
		{"e", domain.ManualAction, domain.ActionApproved, "test", "Test"},
		{"f", domain.ApprovalAction, domain.ActionCancelled, "build", "Build"},
	} {
		a := newAction("run-1", i, "infra")
		a.Type, a.Workflow, a.WorkflowName = spec.typ, spec.workflow, spec.workflowName
		createAction(t, s, a)
		labels[a.ID] = spec.label
		if spec.status != domain.ActionSubmitted {
			_, err := s.Actions.UpdateAction(ctx, a.ID, decide(spec.status, a.CreationDate.Add(time.Hour)))
			require.NoError(t, err)
		}
	}
	other := newAction("run-2", 0, "other")
	createAction(t, s, other)
	labels[other.ID] = "x"
	return labels
}

func actionSearches(t *testing.T, s app.Stores) {
	ctx := context.Background()
	labels := searchActions(t, s)
	from, to := at.Add(time.Minute), at.Add(3*time.Minute)
	infra := domain.ActionFilter{Team: "infra"}
	asc := func(field string) domain.ActionSort { return domain.ActionSort{Field: field, Asc: true} }
	desc := func(field string) domain.ActionSort { return domain.ActionSort{Field: field} }
	all := page.Request{Size: 10}
	tests := []struct {
		name  string
		f     domain.ActionFilter
		s     domain.ActionSort
		p     page.Request
		want  []string
		total int64
	}{
		{"newest first by default", infra, domain.ActionSort{}, all, []string{"f", "e", "d", "c", "b", "a"}, 6},
		{"by creation date, oldest first", infra, asc("creationDate"), all, []string{"a", "b", "c", "d", "e", "f"}, 6},
		{"by name, then id", infra, asc("name"), all, []string{"a", "c", "f", "b", "d", "e"}, 6},
		{"by name, descending", infra, desc("name"), all, []string{"e", "d", "b", "f", "c", "a"}, 6},
		{"by status, then id", infra, asc("status"), all, []string{"c", "e", "f", "d", "a", "b"}, 6},
		{"by status, descending", infra, desc("status"), all, []string{"b", "a", "d", "f", "e", "c"}, 6},
		{"second page", infra, asc("creationDate"), page.Request{Number: 1, Size: 4}, []string{"e", "f"}, 6},
		{"second page by name", infra, asc("name"), page.Request{Number: 1, Size: 2}, []string{"f", "b"}, 6},
		{"past the end", infra, asc("creationDate"), page.Request{Number: 5, Size: 4}, []string{}, 6},
		{"types", domain.ActionFilter{Team: "infra", Types: []string{"manual"}}, asc(""), all, []string{"b", "e"}, 2},
		{"statuses", domain.ActionFilter{Team: "infra", Statuses: []string{"approved", "cancelled"}}, asc(""), all, []string{"c", "e", "f"}, 3},
		{"workflows", domain.ActionFilter{Team: "infra", Workflows: []string{"build", "test"}}, asc(""), all, []string{"a", "c", "e", "f"}, 4},
		{"unknown workflow", domain.ActionFilter{Team: "infra", Workflows: []string{"nope"}}, asc(""), all, []string{}, 0},
		{"dates, both ends in", domain.ActionFilter{Team: "infra", From: &from, To: &to}, asc(""), all, []string{"b", "c", "d"}, 3},
		{"all filters", domain.ActionFilter{Team: "infra", Types: []string{"approval"}, Statuses: []string{"submitted", "rejected"},
			Workflows: []string{"deploy"}, From: &from}, asc(""), all, []string{"d"}, 1},
		{"another team", domain.ActionFilter{Team: "other"}, asc(""), all, []string{"x"}, 1},
	}
	for _, tt := range tests {
		got, total, err := s.Actions.FindActions(ctx, tt.f, tt.s, tt.p)
		require.NoError(t, err, tt.name)
		seen := []string{}
		for _, id := range actionIDs(got) {
			seen = append(seen, labels[id])
		}
		assert.Equal(t, tt.want, seen, tt.name)
		assert.Equal(t, tt.total, total, tt.name)
	}
}

func actionCounts(t *testing.T, s app.Stores) {
	ctx := context.Background()
	searchActions(t, s)
	from := at.Add(2 * time.Minute)
	tests := []struct {
		name string
		f    domain.ActionFilter
		want domain.ActionCounts
	}{
		{"the team's", domain.ActionFilter{Team: "infra"}, domain.ActionCounts{OpenApprovals: 1, OpenManual: 1, Approvals: 4, ApprovalsClosed: 3}},
		{"workflows", domain.ActionFilter{Team: "infra", Workflows: []string{"build"}}, domain.ActionCounts{OpenApprovals: 1, Approvals: 3, ApprovalsClosed: 2}},
		{"from a date", domain.ActionFilter{Team: "infra", From: &from}, domain.ActionCounts{Approvals: 3, ApprovalsClosed: 3}},
		{"types", domain.ActionFilter{Team: "infra", Types: []string{"manual"}}, domain.ActionCounts{OpenManual: 1}},
		{"another team", domain.ActionFilter{Team: "other"}, domain.ActionCounts{OpenApprovals: 1, Approvals: 1}},
		{"nobody", domain.ActionFilter{Team: "nobody"}, domain.ActionCounts{}},
	}
	for _, tt := range tests {
		got, err := s.Actions.CountActions(ctx, tt.f)
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, got, tt.name)
	}
}

func actionValues(t *testing.T, s app.Stores) {
	ctx := context.Background()
	a := newAction("run-1", 0, "infra")
	a.Type = domain.ManualAction
	a.Form = []domain.Param{
		{Name: "user", Label: "User", Type: "text"},
		{Name: "pw", Label: "Password", Type: "password", Default: json.RawMessage(`"d3fault-pw"`)},
	}
	a.SecretValues = []string{"pw"}
	createAction(t, s, a)
	values := map[string]any{"user": "ann", "pw": "s3cret-pw", "count": 3.0}
	done, err := s.Actions.UpdateAction(ctx, a.ID, func(x *domain.Action) error {
		x.Values, x.Status, x.DecidedAt = values, domain.ActionApproved, at.Add(time.Minute)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, values, done.Values)

	back, err := s.Actions.FindAction(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, values, back.Values)
	assert.Equal(t, []string{"pw"}, back.SecretValues)
	assert.Equal(t, a.Form, back.Form)
	again, err := s.Actions.UpdateAction(ctx, a.ID, apply)
	require.NoError(t, err)
	assert.Equal(t, values, again.Values, "an update keeps the values it did not change")
}

// waiter is task of run's first attempt waiting from at.
func waiter(run string, task int) domain.Waiter {
	return domain.Waiter{Run: run, Task: task, Attempt: 1, At: at}
}

// acquire is fn having w acquire a lock.
func acquire(w domain.Waiter) func(*domain.Lock) error {
	return func(l *domain.Lock) error {
		l.Acquire(w)
		return nil
	}
}

// normalLock is l with an empty queue as nil, which a store may answer either way.
func normalLock(l domain.Lock) domain.Lock {
	if len(l.Queue) == 0 {
		l.Queue = nil
	}
	return l
}

func queueRuns(l *domain.Lock) []string {
	out := []string{}
	for _, w := range l.Queue {
		out = append(out, w.Run)
	}
	return out
}

func lockQueue(t *testing.T, s app.Stores) {
	ctx := context.Background()
	var granted bool
	l, err := s.Locks.UpdateLock(ctx, "infra", "deploy", func(l *domain.Lock) error {
		assert.Zero(t, l.Version, "a lock with no record reads free")
		assert.True(t, l.Free())
		granted = l.Acquire(waiter("r1", 0))
		return nil
	})
	require.NoError(t, err)
	assert.True(t, granted)
	assert.NotZero(t, l.Version, "stored")
	assert.Equal(t, waiter("r1", 0), l.Holder)
	assert.False(t, l.Notified, "granted: untold until its run takes it")

	for _, run := range []string{"r2", "r3", "r4"} {
		l, err = s.Locks.UpdateLock(ctx, "infra", "deploy", func(l *domain.Lock) error {
			granted = l.Acquire(waiter(run, 1))
			return nil
		})
		require.NoError(t, err)
		assert.False(t, granted, run)
	}
	assert.Equal(t, []string{"r2", "r3", "r4"}, queueRuns(l))

	_, err = s.Locks.UpdateLock(ctx, "infra", "deploy", func(l *domain.Lock) error {
		l.Release("r1")
		return errRefused
	})
	assert.ErrorIs(t, err, errRefused)
	stored, err := s.Locks.FindRunLocks(ctx, "r1")
	require.NoError(t, err)
	require.Len(t, stored, 1, "fn's error stores nothing")
	assert.Equal(t, normalLock(*l), normalLock(stored[0]))

	untold, err := s.Locks.FindUntold(ctx)
	require.NoError(t, err)
	require.Len(t, untold, 1)
	assert.Equal(t, "r1", untold[0].Holder.Run)
	_, err = s.Locks.UpdateLock(ctx, "infra", "deploy", func(l *domain.Lock) error {
		l.Notified = true
		return nil
	})
	require.NoError(t, err)
	untold, err = s.Locks.FindUntold(ctx)
	require.NoError(t, err)
	assert.Empty(t, untold)
	for i, want := range []string{"r2", "r3", "r4"} {
		var next domain.Waiter
		l, err = s.Locks.UpdateLock(ctx, "infra", "deploy", func(l *domain.Lock) error {
			next, granted = l.Release(l.Holder.Run)
			return nil
		})
		require.NoError(t, err)
		require.True(t, granted, want)
		assert.Equal(t, waiter(want, 1), next, "first come first served")
		assert.Equal(t, next, l.Holder)
		assert.False(t, l.Notified)
		assert.Equal(t, []string{"r2", "r3", "r4"}[i+1:], queueRuns(l))

		untold, err = s.Locks.FindUntold(ctx)
		require.NoError(t, err)
		require.Len(t, untold, 1)
		assert.Equal(t, normalLock(*l), normalLock(untold[0]))
		_, err = s.Locks.UpdateLock(ctx, "infra", "deploy", func(l *domain.Lock) error {
			l.Notified = true
			return nil
		})
		require.NoError(t, err)
		untold, err = s.Locks.FindUntold(ctx)
		require.NoError(t, err)
		assert.Empty(t, untold, "told")
	}

	l, err = s.Locks.UpdateLock(ctx, "infra", "deploy", func(l *domain.Lock) error {
		_, granted = l.Release("r4")
		return nil
	})
	require.NoError(t, err)
	assert.False(t, granted)
	assert.True(t, l.Free())
	assert.Zero(t, l.Version, "a free lock is removed")
	l, err = s.Locks.UpdateLock(ctx, "infra", "deploy", func(l *domain.Lock) error {
		assert.Zero(t, l.Version, "no record left")
		return nil
	})
	require.NoError(t, err)
	assert.Zero(t, l.Version, "a lock left free is not stored")
	held, err := s.Locks.FindRunLocks(ctx, "r4")
	require.NoError(t, err)
	assert.Empty(t, held)
}

func updateLockIsConditional(t *testing.T, s app.Stores) {
	ctx := context.Background()
	calls := 0
	l, err := s.Locks.UpdateLock(ctx, "infra", "deploy", func(l *domain.Lock) error {
		calls++
		if calls == 1 {
			// Another writer creates the lock between this read and its write.
			_, err := s.Locks.UpdateLock(ctx, "infra", "deploy", acquire(waiter("r1", 0)))
			require.NoError(t, err)
		}
		l.Acquire(waiter("r2", 0))
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, calls)
	assert.Equal(t, "r1", l.Holder.Run, "the first writer's holder is kept")
	assert.Equal(t, []string{"r2"}, queueRuns(l))

	calls = 0
	l, err = s.Locks.UpdateLock(ctx, "infra", "deploy", func(l *domain.Lock) error {
		calls++
		if calls == 1 {
			// Another writer frees the lock between this read and its write.
			_, err := s.Locks.UpdateLock(ctx, "infra", "deploy", func(l *domain.Lock) error {
				l.Release("r1")
				l.Release("r2")
				return nil
			})
			require.NoError(t, err)
		}
		l.Acquire(waiter("r3", 0))
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, calls)
	assert.Equal(t, "r3", l.Holder.Run, "taken anew once free")
	assert.Empty(t, queueRuns(l))
}

func concurrentLockUpdates(t *testing.T, s app.Stores) {
	ctx := context.Background()
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = retryConflicts(func() error {
				_, err := s.Locks.UpdateLock(ctx, "infra", "deploy", acquire(waiter(fmt.Sprintf("r%d", i), 0)))
				return err
			})
		})
	}
	wg.Wait()
	want := make([]string, n)
	for i := range n {
		require.NoError(t, errs[i])
		want[i] = fmt.Sprintf("r%d", i)
	}
	l, err := s.Locks.UpdateLock(ctx, "infra", "deploy", func(*domain.Lock) error { return nil })
	require.NoError(t, err)
	assert.ElementsMatch(t, want, append(queueRuns(l), l.Holder.Run), "one holds it, every other waits, once")
}

func runLocks(t *testing.T, s app.Stores) {
	ctx := context.Background()
	for _, step := range []struct {
		team, key string
		w         domain.Waiter
	}{
		{"infra", "k1", waiter("r1", 0)},
		{"infra", "k2", waiter("r2", 0)},
		{"infra", "k2", waiter("r1", 1)},
		{"infra", "k2", waiter("r3", 0)},
		{"other", "k1", waiter("r9", 0)},
	} {
		_, err := s.Locks.UpdateLock(ctx, step.team, step.key, acquire(step.w))
		require.NoError(t, err)
	}
	keys := func(locks []domain.Lock) []string {
		out := []string{}
		for _, l := range locks {
			out = append(out, l.Team+"/"+l.Key)
		}
		return out
	}
	for _, tt := range []struct {
		run  string
		want []string
	}{
		{"r1", []string{"infra/k1", "infra/k2"}},
		{"r2", []string{"infra/k2"}},
		{"r3", []string{"infra/k2"}},
		{"r9", []string{"other/k1"}},
		{"nope", []string{}},
	} {
		got, err := s.Locks.FindRunLocks(ctx, tt.run)
		require.NoError(t, err)
		assert.Equal(t, tt.want, keys(got), tt.run)
	}
	got, err := s.Locks.FindRunLocks(ctx, "r1")
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, waiter("r1", 0), got[0].Holder)
	assert.Equal(t, []domain.Waiter{waiter("r1", 1), waiter("r3", 0)}, got[1].Queue)
}

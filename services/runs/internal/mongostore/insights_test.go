package mongostore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// insightRun is a run of known duration for the insight tests.
type insightRun struct {
	id, workflow string
	status       domain.Status
	phase        domain.Phase
	age          time.Duration // before now
	duration     time.Duration // 0 and not started when notStarted
	notStarted   bool
}

func TestInsight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	runs := []insightRun{
		{id: "a", workflow: "build", status: domain.Succeeded, phase: domain.Completed, age: time.Hour, duration: 10 * time.Second},
		{id: "b", workflow: "build", status: domain.Failed, phase: domain.Completed, age: 2 * time.Hour, duration: 40 * time.Second},
		{id: "c", workflow: "deploy", status: domain.Succeeded, phase: domain.Finalized, age: 3 * time.Hour, duration: 20 * time.Second},
		{id: "d", workflow: "deploy", status: domain.Cancelled, phase: domain.Completed, age: 4 * time.Hour, duration: 90 * time.Second},
		{id: "e", workflow: "build", status: domain.Invalid, phase: domain.Completed, age: 5 * time.Hour, notStarted: true},
		// In flight: one running for 30 s so far, one queued.
		{id: "f", workflow: "build", status: domain.Running, phase: domain.PhaseRunning, age: 10 * time.Minute, duration: 30 * time.Second},
		{id: "g", workflow: "deploy", status: domain.Ready, phase: domain.Queued, age: time.Minute, notStarted: true},
		// Outside the window below, and another team's.
		{id: "old", workflow: "build", status: domain.Succeeded, phase: domain.Completed, age: 40 * 24 * time.Hour, duration: time.Hour},
	}
	for _, ir := range runs {
		r := &domain.Run{ID: ir.id, Team: "infra", Workflow: ir.workflow, WorkflowDisplayName: "The " + ir.workflow,
			Status: ir.status, Phase: ir.phase, Trigger: "manual", CreationDate: now.Add(-ir.age)}
		if !ir.notStarted {
			r.StartTime = r.CreationDate
			if ir.phase.Ended() {
				r.EndTime = r.StartTime.Add(ir.duration)
			} else {
				r.StartTime = now.Add(-ir.duration)
			}
		}
		require.NoError(t, s.CreateRun(ctx, r, nil))
	}
	other := &domain.Run{ID: "x", Team: "other", Workflow: "build", Status: domain.Succeeded, Phase: domain.Completed,
		CreationDate: now, StartTime: now, EndTime: now.Add(time.Hour)}
	require.NoError(t, s.CreateRun(ctx, other, nil))

	from := now.Add(-30 * 24 * time.Hour)
	sec := int64(time.Second / time.Millisecond)
	tests := []struct {
		name    string
		filter  domain.RunFilter
		max     int
		total   int64
		running int64
		sum     int64
		median  int64
		ids     []string
	}{
		// Durations 0 (e), 0 (g), 10, 20, 30, 40, 90: median 20.
		{"window", domain.RunFilter{Team: "infra", From: &from}, 1000, 7, 1, 190 * sec, 20 * sec, []string{"g", "f", "a", "b", "c", "d", "e"}},
		// With "old" (3600): 0 0 10 20 30 40 90 3600, median (20+30)/2.
		{"all time", domain.RunFilter{Team: "infra"}, 1000, 8, 1, 3790 * sec, 25 * sec, []string{"g", "f", "a", "b", "c", "d", "e", "old"}},
		{"newest two", domain.RunFilter{Team: "infra", From: &from}, 2, 7, 1, 190 * sec, 20 * sec, []string{"g", "f"}},
		// build: 0 (e), 10, 30, 40: median 20.
		{"one workflow", domain.RunFilter{Team: "infra", From: &from, Workflows: []string{"build"}}, 1000, 4, 1, 80 * sec, 20 * sec, []string{"f", "a", "b", "e"}},
		{"statuses", domain.RunFilter{Team: "infra", From: &from, Statuses: []string{"succeeded", "cancelled"}}, 1000, 3, 0, 120 * sec, 20 * sec, []string{"a", "c", "d"}},
		{"in flight only", domain.RunFilter{Team: "infra", Statuses: []string{"running", "ready"}}, 1000, 2, 1, 30 * sec, 15 * sec, []string{"g", "f"}},
		{"nothing", domain.RunFilter{Team: "nobody"}, 1000, 0, 0, 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := s.Insight(ctx, tt.filter, now, tt.max)
			require.NoError(t, err)
			assert.Equal(t, tt.total, in.Total, "total")
			assert.Equal(t, tt.running, in.Running, "running")
			assert.Equal(t, tt.sum, in.TotalDuration, "total duration")
			assert.Equal(t, tt.median, in.MedianDuration, "median duration")
			var ids []string
			for _, r := range in.Runs {
				ids = append(ids, r.ID)
			}
			assert.Equal(t, tt.ids, ids)
		})
	}

	in, err := s.Insight(ctx, domain.RunFilter{Team: "infra", IDs: []string{"b", "f"}}, now, 10)
	require.NoError(t, err)
	require.Len(t, in.Runs, 2)
	assert.Equal(t, domain.RunSummary{ID: "b", Workflow: "build", Status: domain.Failed,
		CreationDate: now.Add(-2 * time.Hour), Duration: 40 * sec}, in.Runs[1])
	assert.Equal(t, 30*sec, in.Runs[0].Duration, "a run in flight counts its time so far")
}

// TestInsightMedianIsTrue checks the median against a sort of every duration, for sets
// whose middle falls among the archived runs, among those in flight, and between them.
func TestInsightMedianIsTrue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	tests := []struct {
		name          string
		ended, flight []int64 // seconds
	}{
		{"ended only, odd", []int64{5, 1, 9, 3, 7}, nil},
		{"ended only, even", []int64{8, 2, 4, 6}, nil},
		{"flight below", []int64{50, 60, 70, 80, 90, 100}, []int64{1, 2}},
		{"flight above", []int64{1, 2, 3, 4, 5}, []int64{100, 200, 300}},
		{"flight in the middle", []int64{1, 2, 3, 100, 200, 300}, []int64{50, 51}},
		{"flight only", nil, []int64{4, 8, 15}},
		{"ties", []int64{7, 7, 7, 7}, []int64{7, 7}},
	}
	for i, tt := range tests {
		team := fmt.Sprintf("median-%d", i)
		var all []int64
		for j, d := range tt.ended {
			start := now.Add(-time.Hour)
			r := &domain.Run{ID: fmt.Sprintf("%s-e%d", team, j), Team: team, Workflow: "w", Status: domain.Succeeded,
				Phase: domain.Completed, CreationDate: start, StartTime: start, EndTime: start.Add(time.Duration(d) * time.Second)}
			require.NoError(t, s.CreateRun(ctx, r, nil))
			all = append(all, d*1000)
		}
		for j, d := range tt.flight {
			r := &domain.Run{ID: fmt.Sprintf("%s-f%d", team, j), Team: team, Workflow: "w", Status: domain.Running,
				Phase: domain.PhaseRunning, CreationDate: now.Add(-time.Hour), StartTime: now.Add(-time.Duration(d) * time.Second)}
			require.NoError(t, s.CreateRun(ctx, r, nil))
			all = append(all, d*1000)
		}
		slices.Sort(all)
		want := (all[(len(all)-1)/2] + all[len(all)/2]) / 2
		t.Run(tt.name, func(t *testing.T) {
			in, err := s.Insight(ctx, domain.RunFilter{Team: team}, now, 1000)
			require.NoError(t, err)
			assert.Equal(t, want, in.MedianDuration)
			assert.EqualValues(t, len(all), in.Total)
		})
	}
}

// A run being put away is in both collections for a moment: it counts once, and its
// summary shows once.
func TestInsightCountsARunBeingPutAwayOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	start := now.Add(-time.Minute)
	live := &domain.Run{ID: "moving", Team: "infra", Workflow: "w", Status: domain.Succeeded, Phase: domain.Completed,
		CreationDate: start, StartTime: start, EndTime: start.Add(5 * time.Second), Owner: "replica-a"}
	archived := *live
	// The live copy is written as a run in flight is; the archived one as a run that ended.
	live.Phase = domain.PhaseRunning
	require.NoError(t, s.CreateRun(ctx, live, nil))
	archived.Phase = domain.Completed
	require.NoError(t, s.CreateRun(ctx, &archived, nil))
	live.Phase = domain.Completed
	require.NoError(t, s.SaveStep(ctx, live, nil, nil))

	in, err := s.Insight(ctx, domain.RunFilter{Team: "infra"}, now, 10)
	require.NoError(t, err)
	assert.EqualValues(t, 1, in.Total)
	assert.EqualValues(t, 5000, in.TotalDuration)
	assert.EqualValues(t, 5000, in.MedianDuration)
	require.Len(t, in.Runs, 1)
	assert.Equal(t, "moving", in.Runs[0].ID)
}

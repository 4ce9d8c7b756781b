package mongostore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Recounting the slots makes each team's set and count its runs in flight that hold one:
// started ones; not queued ones, children in their tree's slot, nor runs whose end is
// stored. What an earlier version left in the documents (a count too high, a run pending,
// a slot of a run long ended, a team with no run) goes; recounting again writes the same;
// the slots then work as ever.
func TestRecountSlotsFromTheRunsInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := newStoreDB(t)
	at := time.Now().UTC().Truncate(time.Millisecond)
	run := func(id, team string, phase domain.Phase, edit func(*domain.Run)) *domain.Run {
		r := &domain.Run{ID: id, Team: team, Workflow: "w", Status: domain.Running, Phase: phase, CreationDate: at, StartTime: at, Owner: "replica-a"}
		if edit != nil {
			edit(r)
		}
		require.NoError(t, s.CreateRun(ctx, r, nil))
		return r
	}
	run("running", "infra", domain.PhaseRunning, nil)
	run("waiting", "infra", domain.Queued, func(r *domain.Run) { r.Status, r.Queued = domain.Ready, true })
	run("child", "infra", domain.PhaseRunning, func(r *domain.Run) { r.SharesSlot = true })
	run("elsewhere", "other", domain.PhaseRunning, nil)
	ended := run("ended", "infra", domain.PhaseRunning, nil)
	ended.Status, ended.Phase, ended.EndTime = domain.Succeeded, domain.Completed, at
	require.NoError(t, s.SaveStep(ctx, ended, nil, nil))
	// As a process that kept its slots in memory left the documents behind.
	upsert := options.Replace().SetUpsert(true)
	_, err := db.Collection("counters").ReplaceOne(ctx, bson.M{"_id": "slots/infra"}, bson.M{"n": 7, "pending": bson.M{"gone": "acquire"}}, upsert)
	require.NoError(t, err)
	_, err = db.Collection("counters").ReplaceOne(ctx, bson.M{"_id": "slots/idle"}, bson.M{"n": 3}, upsert)
	require.NoError(t, err)
	_, err = db.Collection("slots").InsertOne(ctx, bson.M{"_id": "infra/gone", "team": "infra"})
	require.NoError(t, err)

	for range 2 {
		held, err := s.RecountSlots(ctx)
		require.NoError(t, err)
		assert.Equal(t, 2, held)
		for team, want := range map[string]int{"infra": 1, "other": 1, "idle": 0, "none": 0} {
			n, err := s.SlotsTaken(ctx, team)
			require.NoError(t, err)
			assert.Equal(t, want, n, team)
		}
	}
	steps := []struct {
		run  string
		want bool
	}{{"new", true}, {"more", false}, {"running", true}, {"gone", false}}
	for _, step := range steps {
		ok, err := s.AcquireSlot(ctx, "infra", step.run, 2)
		require.NoError(t, err)
		assert.Equal(t, step.want, ok, step.run)
	}
	require.NoError(t, s.ReleaseSlot(ctx, "infra", "running"))
	ok, err := s.AcquireSlot(ctx, "infra", "more", 2)
	require.NoError(t, err)
	assert.True(t, ok, "a slot given back is free")
}

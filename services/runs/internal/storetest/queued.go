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

// queuedAttempts: a queue answers its team's attempts waiting in it, oldest first, each
// once however often it is put, until deleted.
func queuedAttempts(t *testing.T, s app.Stores) {
	ctx := context.Background()
	q := func(id, team, queue string, after time.Duration) domain.QueuedAttempt {
		return domain.QueuedAttempt{ID: id, Team: team, Queue: queue, Run: "r-" + id, TaskRun: "r-" + id + ".1", Attempt: 1, At: at.Add(after)}
	}
	require.NoError(t, s.Queues.PutQueued(ctx, []domain.QueuedAttempt{
		q("c", "infra", "deploy", 3*time.Second), q("a", "infra", "deploy", time.Second), q("b", "infra", "deploy", 2*time.Second),
		q("x", "infra", "build", 0), q("y", "other", "deploy", 0),
	}))
	// Put again, later: it keeps its place.
	require.NoError(t, s.Queues.PutQueued(ctx, []domain.QueuedAttempt{q("a", "infra", "deploy", time.Hour)}))
	ids := func(team, queue string, limit int) []string {
		got, err := s.Queues.FindQueued(ctx, team, queue, limit)
		require.NoError(t, err)
		out := []string{}
		for _, g := range got {
			out = append(out, g.ID)
		}
		return out
	}
	assert.Equal(t, []string{"a", "b", "c"}, ids("infra", "deploy", 10))
	assert.Equal(t, []string{"a", "b"}, ids("infra", "deploy", 2))
	assert.Equal(t, []string{"x"}, ids("infra", "build", 10))
	got, err := s.Queues.FindQueued(ctx, "infra", "deploy", 1)
	require.NoError(t, err)
	assert.Equal(t, q("a", "infra", "deploy", time.Second), got[0], "read back whole")

	require.NoError(t, s.Queues.DeleteQueued(ctx, "a", "nope"))
	assert.Equal(t, []string{"b", "c"}, ids("infra", "deploy", 10))
	require.NoError(t, s.Queues.DeleteQueued(ctx))
	assert.Equal(t, []string{"y"}, ids("other", "deploy", 10))
}

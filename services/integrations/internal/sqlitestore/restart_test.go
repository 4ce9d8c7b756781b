package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/integrations/internal/domain"
	"github.com/baton-flow/baton/services/integrations/internal/sqlitestore"
)

// A file serves one replica: opened again, it lets go of the queues the process before
// held, so the new process delivers them at once rather than when their leases lapse, and
// reads them from their place.
func TestReopenedLetsGoOfQueues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "integrations.db")
	box := newBox(t)
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	first, err := sqlitestore.Open(ctx, path, box)
	require.NoError(t, err)
	qid := domain.QueueID("http://sink.example/", "run")
	q := &domain.Queue{ID: qid, Sink: "http://sink.example/", Run: "run", Gen: "g", Next: 1, Owner: "before", LeaseUntil: now.Add(30 * time.Second)}
	e := domain.Event{Queue: qid, Gen: "g", Seq: q.Append("e1"), EventID: "e1", Body: []byte(`{"id":"e1"}`), Recorded: now}
	q.Inline = map[int64]domain.Event{e.Seq: e}
	require.NoError(t, first.Deliveries().CreateQueue(ctx, q))
	due, err := first.Deliveries().FindDueQueues(ctx, "after", now, 10)
	require.NoError(t, err)
	require.Empty(t, due, "held by the process that is running")
	require.NoError(t, first.Close())

	second := open(t, path, box)
	due, err = second.Deliveries().FindDueQueues(ctx, "after", now, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{qid}, due, "free at once, within the lease of the process before")
	held, err := second.Deliveries().ClaimQueue(ctx, qid, "after", now, now.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, int64(1), held.Next)
	assert.Equal(t, map[int64]domain.Event{1: e}, held.Inline)
}

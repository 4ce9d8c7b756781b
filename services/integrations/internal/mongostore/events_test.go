package mongostore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/mongostore"
)

func newReceipts(t *testing.T) *mongostore.Receipts {
	t.Helper()
	client, err := mongox.Connect(context.Background(), testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	s := mongostore.NewReceipts(client.Database(testkit.Database(t)))
	require.NoError(t, s.EnsureIndexes(context.Background()), "a TTL index, or none where the server has none")
	require.NoError(t, s.EnsureIndexes(context.Background()), "again at the next start")
	return s
}

func TestReceipts(t *testing.T) {
	t.Parallel()
	s := newReceipts(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	since := now.Add(-app.ReceiptTTL)
	run := func(id string) *events.WorkflowRun {
		return &events.WorkflowRun{ID: id, Team: "ops", WorkflowRef: "build", Status: "running", Phase: "running", Trigger: "event",
			Params: []events.NameValue{{Name: "data", Value: map[string]any{"k": "v"}}}}
	}

	_, found, err := s.FindReceipt(ctx, "event:k1", since)
	require.NoError(t, err)
	assert.False(t, found)

	require.NoError(t, s.CreateReceipt(ctx, app.Receipt{Key: "event:k1", Team: "ops", Workflow: "build", Run: run("r1"), Created: now}, since))
	d, found, err := s.FindReceipt(ctx, "event:k1", since)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, run("r1"), d.Run)
	assert.Equal(t, "ops", d.Team)
	assert.True(t, now.Equal(d.Created))

	// A twin's record is kept.
	require.NoError(t, s.CreateReceipt(ctx, app.Receipt{Key: "event:k1", Team: "ops", Workflow: "build", Run: run("r2"), Created: now.Add(time.Second)}, since))
	d, _, err = s.FindReceipt(ctx, "event:k1", since)
	require.NoError(t, err)
	assert.Equal(t, "r1", d.Run.ID)

	// Past its life it names nothing, and is replaced.
	later := now.Add(app.ReceiptTTL + time.Minute)
	_, found, err = s.FindReceipt(ctx, "event:k1", later.Add(-app.ReceiptTTL))
	require.NoError(t, err)
	assert.False(t, found)
	require.NoError(t, s.CreateReceipt(ctx, app.Receipt{Key: "event:k1", Team: "ops", Workflow: "build", Run: run("r3"), Created: later}, later.Add(-app.ReceiptTTL)))
	d, _, err = s.FindReceipt(ctx, "event:k1", later.Add(-app.ReceiptTTL))
	require.NoError(t, err)
	assert.Equal(t, "r3", d.Run.ID)

	// Purge removes what is past its life only.
	require.NoError(t, s.CreateReceipt(ctx, app.Receipt{Key: "event:old", Team: "ops", Workflow: "build", Run: run("r4"), Created: now}, since))
	require.NoError(t, s.Purge(ctx, later.Add(-app.ReceiptTTL)))
	_, found, err = s.FindReceipt(ctx, "event:old", time.Time{})
	require.NoError(t, err)
	assert.False(t, found, "purged")
	_, found, err = s.FindReceipt(ctx, "event:k1", time.Time{})
	require.NoError(t, err)
	assert.True(t, found, "kept")
}

// Records created at once share inserts and each gets its own answer.
func TestReceiptsTogether(t *testing.T) {
	t.Parallel()
	s := newReceipts(t)
	ctx := context.Background()
	now := time.Now().UTC()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			key := fmt.Sprintf("event:%d", i%25) // each key twice
			err := s.CreateReceipt(ctx, app.Receipt{Key: key, Team: "ops", Workflow: "build", Run: &events.WorkflowRun{ID: fmt.Sprint("r", i)}, Created: now}, now.Add(-app.ReceiptTTL))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	for i := range 25 {
		d, found, err := s.FindReceipt(ctx, fmt.Sprintf("event:%d", i), now.Add(-app.ReceiptTTL))
		require.NoError(t, err)
		require.True(t, found)
		assert.Contains(t, []string{fmt.Sprint("r", i), fmt.Sprint("r", i+25)}, d.Run.ID)
	}
}

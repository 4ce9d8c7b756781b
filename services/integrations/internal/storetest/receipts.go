package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/integrations/internal/app"
)

// receipt is the record of key naming run id, made at created.
func receipt(key, id string, created time.Time) app.Receipt {
	return app.Receipt{Key: key, Team: "ops", Workflow: "build", Run: &events.WorkflowRun{ID: id, Team: "ops", WorkflowRef: "build",
		Status: "running", Phase: "running", Trigger: "event", Params: []events.NameValue{{Name: "data", Value: map[string]any{"k": "v"}}}},
		Created: created}
}

func receipts(t *testing.T, all Stores) {
	s := all.Receipts
	ctx := context.Background()
	now := at
	since := now.Add(-app.ReceiptTTL)

	_, found, err := s.FindReceipt(ctx, "event:k1", since)
	require.NoError(t, err)
	assert.False(t, found)

	first := receipt("event:k1", "r1", now)
	require.NoError(t, s.CreateReceipt(ctx, first, since))
	d, found, err := s.FindReceipt(ctx, "event:k1", since)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, first.Run, d.Run, "the run as first answered, whole")
	assert.Equal(t, "ops", d.Team)
	assert.Equal(t, "build", d.Workflow)
	assert.Equal(t, "event:k1", d.Key)
	assert.True(t, now.Equal(d.Created))

	// A twin's record is kept.
	require.NoError(t, s.CreateReceipt(ctx, receipt("event:k1", "r2", now.Add(time.Second)), since))
	d, _, err = s.FindReceipt(ctx, "event:k1", since)
	require.NoError(t, err)
	assert.Equal(t, "r1", d.Run.ID)

	// Past its life it names nothing, and is replaced.
	later := now.Add(app.ReceiptTTL + time.Minute)
	_, found, err = s.FindReceipt(ctx, "event:k1", later.Add(-app.ReceiptTTL))
	require.NoError(t, err)
	assert.False(t, found)
	require.NoError(t, s.CreateReceipt(ctx, receipt("event:k1", "r3", later), later.Add(-app.ReceiptTTL)))
	d, _, err = s.FindReceipt(ctx, "event:k1", later.Add(-app.ReceiptTTL))
	require.NoError(t, err)
	assert.Equal(t, "r3", d.Run.ID)

	// Purge removes what is past its life only.
	require.NoError(t, s.CreateReceipt(ctx, receipt("event:old", "r4", now), since))
	require.NoError(t, s.Purge(ctx, later.Add(-app.ReceiptTTL)))
	_, found, err = s.FindReceipt(ctx, "event:old", time.Time{})
	require.NoError(t, err)
	assert.False(t, found, "purged")
	_, found, err = s.FindReceipt(ctx, "event:k1", time.Time{})
	require.NoError(t, err)
	assert.True(t, found, "kept")
}

// receiptsTogether: records created at once, each key twice, each get their own answer,
// and each key names one of its two runs.
func receiptsTogether(t *testing.T, all Stores) {
	s := all.Receipts
	ctx := context.Background()
	now := at
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			key := fmt.Sprintf("event:%d", i%25)
			assert.NoError(t, s.CreateReceipt(ctx, receipt(key, fmt.Sprint("r", i), now), now.Add(-app.ReceiptTTL)))
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

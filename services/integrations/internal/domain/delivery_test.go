package domain_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

func TestRetryBackoff(t *testing.T) {
	t.Parallel()
	r := domain.DefaultRetry
	tests := []struct {
		attempt int
		want    time.Duration
	}{
		{1, 100 * time.Millisecond},
		{2, 200 * time.Millisecond},
		{3, 400 * time.Millisecond},
		{10, 51200 * time.Millisecond},
		{12, 204800 * time.Millisecond},
		{13, 5 * time.Minute},
		{300, 5 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.attempt), func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, r.Backoff(tt.attempt))
		})
	}
}

func TestRetryGivesUp(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	r := domain.DefaultRetry
	assert.False(t, r.GivesUp(at, at.Add(24*time.Hour-time.Millisecond)))
	assert.True(t, r.GivesUp(at, at.Add(24*time.Hour)))
}

func TestQueueAppend(t *testing.T) {
	t.Parallel()
	q := &domain.Queue{Next: 1}
	assert.True(t, q.Empty())
	for i := range domain.RecentIDs + 10 {
		assert.Equal(t, int64(i+1), q.Append(fmt.Sprint("e", i)))
	}
	assert.False(t, q.Empty())
	assert.Len(t, q.Recent, domain.RecentIDs)
	seq, ok := q.SeqOf(fmt.Sprint("e", domain.RecentIDs+9))
	assert.True(t, ok)
	assert.Equal(t, int64(domain.RecentIDs+10), seq)
	_, ok = q.SeqOf("e0")
	assert.False(t, ok, "forgotten past RecentIDs")
}

func TestQueueID(t *testing.T) {
	t.Parallel()
	id := domain.QueueID("http://sink.example/?token=secret", "run1")
	assert.NotContains(t, id, "secret")
	assert.Equal(t, domain.SinkKey("http://sink.example/?token=secret"), domain.SinkKeyOf(id))
	assert.NotEqual(t, domain.SinkKeyOf(id), domain.SinkKeyOf(domain.QueueID("http://other.example/", "run1")))
}

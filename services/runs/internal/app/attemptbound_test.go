package app_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/memstore"
)

// boundsSeen is a store that notes, for each call a claim or heartbeat makes of it, whether
// the call came with a deadline, and how far.
type boundsSeen struct {
	*memstore.Store
	mu      sync.Mutex
	calls   int
	longest time.Duration // the furthest deadline seen; -1 when a call had none
}

func (s *boundsSeen) note(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	d, ok := ctx.Deadline()
	switch {
	case !ok:
		s.longest = -1
	case s.longest >= 0:
		s.longest = max(s.longest, time.Until(d))
	}
}

func (s *boundsSeen) SaveHeartbeat(ctx context.Context, id string, b domain.Heartbeat) error {
	s.note(ctx)
	return s.Store.SaveHeartbeat(ctx, id, b)
}

func (s *boundsSeen) FindTaskRun(ctx context.Context, id string) (*domain.TaskRun, error) {
	s.note(ctx)
	return s.Store.FindTaskRun(ctx, id)
}

// A claim or heartbeat works under a deadline of its own, as long as the runner waits
// for it: the HTTP server does not end a request whose client gave up, and on a loaded
// store such requests would pile up behind the runners' retries.
func TestClaimAndHeartbeatWorkWithinTheRunnersWait(t *testing.T) {
	t.Parallel()
	s := &boundsSeen{Store: memstore.New()}
	a, _ := newAppOver(t, limits, app.Stores{Runs: s, Quotas: s, Keys: s, Heartbeats: s, Logs: s, Replicas: s, Actions: s, Locks: s, Queues: s})
	ctx := context.Background()
	v, _, err := submit(t, a, "script", "", true)
	require.NoError(t, err)
	task := v.ID + ".1"
	require.Eventually(t, func() bool {
		ok, err := a.Claim(ctx, task, 1, "r1")
		return err == nil && ok
	}, 5*time.Second, time.Millisecond)

	s.mu.Lock()
	before := s.calls
	s.mu.Unlock()
	_, ok, err := a.Heartbeat(ctx, task, 1, "r1")
	require.NoError(t, err)
	require.True(t, ok)
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Greater(t, s.calls, before, "the beat was stored")
	assert.GreaterOrEqual(t, s.longest, time.Duration(0), "every call had a deadline")
	assert.LessOrEqual(t, s.longest, app.AttemptWithin)
}

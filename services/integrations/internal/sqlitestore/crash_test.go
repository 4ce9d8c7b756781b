package sqlitestore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
	"github.com/baton-flow/baton/services/integrations/internal/sqlitestore"
)

// oneSink is the settings of one sink.
type oneSink string

func (s oneSink) IntegrationSettings(context.Context) (identityapi.IntegrationSettings, error) {
	return identityapi.IntegrationSettings{Sinks: []string{string(s)}}, nil
}

// sinkServer keeps the ids of the events sent to it, in order, duplicates included; it
// refuses those its refuse says.
type sinkServer struct {
	mu     sync.Mutex
	got    []string
	refuse func(id string) bool
}

var errRefused = errors.New("the sink answered 503")

func (s *sinkServer) Send(_ context.Context, _ string, body []byte) error {
	e, err := events.Unmarshal(body)
	if err != nil {
		return err
	}
	if s.refuse(e.ID()) {
		return errRefused
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, e.ID())
	return nil
}

// received answers the ids sent to the sink, in order, and each once as first seen.
func (s *sinkServer) received() (all, distinct []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range s.got {
		if !slices.Contains(distinct, id) {
			distinct = append(distinct, id)
		}
	}
	return slices.Clone(s.got), distinct
}

// eventID is the id of run's n-th status event.
func eventID(run string, n int) string {
	return fmt.Sprintf("%s/%d", run, n)
}

// A replica dies while it delivers: its file is closed under it with a run's queue part
// delivered, its place, the events it holds and those stored apart on disk, and no
// letting go. The process started anew on the file delivers the rest, in order, and
// nothing delivered before the death again.
func TestDeliveryResumesAfterADeath(t *testing.T) {
	t.Parallel()
	const sink = oneSink("http://sink.example/events")
	const total, before = 48, 20 // more than a queue holds itself: some are stored apart
	path := filepath.Join(t.TempDir(), "integrations.db")
	box := newBox(t)
	var dead atomic.Bool
	srv := &sinkServer{refuse: func(id string) bool {
		var n int
		_, _ = fmt.Sscanf(id, "run/%d", &n)
		return n >= before && !dead.Load()
	}}
	cfg := app.DeliveryConfig{Poll: 20 * time.Millisecond, Idle: 20 * time.Millisecond,
		Retry: domain.Retry{First: time.Millisecond, Max: 5 * time.Millisecond, GiveUpAfter: time.Hour}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var gens atomic.Int64
	start := func(s *sqlitestore.Store, owner string) (*app.Deliveries, func()) {
		d := app.NewDeliveries(cfg, app.DeliveryDeps{Store: s.Deliveries(), Settings: sink, Sender: srv, Log: log, Now: time.Now, Owner: owner,
			NewID: func() string { return fmt.Sprint("g", gens.Add(1)) }})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			_ = d.Run(ctx)
			close(done)
		}()
		stop := sync.OnceFunc(func() { cancel(); <-done })
		t.Cleanup(stop)
		return d, stop
	}

	first, err := sqlitestore.Open(context.Background(), path, box)
	require.NoError(t, err)
	d, stop := start(first, "first")
	for n := range total {
		e, err := events.New(eventID("run", n), events.Source("runs"), events.TypeStatusWorkflowRun,
			"/workflowrun/run/status/running", events.WorkflowRun{ID: "run", Status: "running", Phase: "running"})
		require.NoError(t, err)
		require.NoError(t, d.Record(context.Background(), e))
	}
	qid := domain.QueueID(string(sink), "run")
	require.Eventually(t, func() bool {
		q, err := first.Deliveries().FindQueue(context.Background(), qid)
		return err == nil && q != nil && q.Next == before+1 && q.Attempt > 0
	}, 10*time.Second, time.Millisecond, "delivered up to the refused event, which is retried")
	_, delivered := srv.received()
	require.Len(t, delivered, before)

	// Death: the file closes under the replica; nothing it writes from now on lands, and
	// it never lets go of its queue.
	require.NoError(t, first.Close())
	stop()
	dead.Store(true)

	second := open(t, path, box)
	start(second, "second")
	want := make([]string, total)
	for n := range total {
		want[n] = eventID("run", n)
	}
	require.Eventually(t, func() bool { _, distinct := srv.received(); return len(distinct) == total }, 10*time.Second, time.Millisecond)
	all, distinct := srv.received()
	assert.Equal(t, want, distinct, "every event, in order")
	assert.Equal(t, want[:before], all[:before], "those delivered before the death, once")
	assert.Equal(t, want, all, "and the rest once each")
	require.Eventually(t, func() bool {
		q, err := second.Deliveries().FindQueue(context.Background(), qid)
		return err == nil && q == nil
	}, 10*time.Second, time.Millisecond, "the delivered queue is deleted")
}

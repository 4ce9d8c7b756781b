package integrations

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
)

// saidTo keeps what a recordedSayer publishes.
type saidTo struct {
	mu   sync.Mutex
	msgs []kafkax.Message
}

func (s *saidTo) PublishMany(_ context.Context, topic string, msgs ...kafkax.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		m.Topic = topic
		s.msgs = append(s.msgs, m)
	}
	return nil
}

func (s *saidTo) said() map[string][]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]int64{}
	for _, m := range s.msgs {
		d, err := events.Decode[events.StatusRecorded](m.Event)
		if err == nil && m.Topic == events.RunEventsRecorded && m.Key == d.Run {
			out[d.Run] = append(out[d.Run], d.Seqs...)
		}
	}
	for run, seqs := range out {
		slices.Sort(seqs)
		out[run] = slices.Compact(seqs)
	}
	return out
}

// The runs service hears the number of every status event recorded, of each run; an event
// without a number (an action's) says nothing.
func TestRecordedSayerSaysEveryNumberRecorded(t *testing.T) {
	t.Parallel()
	pub := &saidTo{}
	s := newRecordedSayer(pub, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = s.run(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	tests := []struct {
		subject string
		seq     int64
	}{
		{"/workflowrun/r1/status/running", 1},
		{"/workflowrun/r1/taskrun/r1.0/status/succeeded", 2},
		{"/workflowrun/r2/taskrun/r2.1/status/running", 4},
		{"/workflowrun/r1/status/succeeded", 5},
		{"/workflowrun/r1/taskrun/r1.0/status/succeeded", 2},
		{"/action/r2.1-1/status/approved", 0},
	}
	for _, tt := range tests {
		e, err := events.New(tt.subject, events.Source("runs"), events.TypeStatusTaskRun, tt.subject, map[string]any{})
		require.NoError(t, err)
		if tt.seq > 0 {
			events.SetSeq(&e, tt.seq)
		}
		s.recorded(e)
	}
	want := map[string][]int64{"r1": {1, 2, 5}, "r2": {4}}
	assert.Eventually(t, func() bool { return assert.ObjectsAreEqual(want, pub.said()) }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, want, pub.said())
}

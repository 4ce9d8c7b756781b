package feed_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/feed"
	"github.com/baton-flow/baton/services/runs/internal/view"
)

const wait, tick = 5 * time.Second, time.Millisecond

// source is a run whose state the test sets; it counts the reads of it.
type source struct {
	mu    sync.Mutex
	state feed.State
	err   error
	reads atomic.Int64
	// gate, when set, holds each read until it receives.
	gate chan struct{}
}

func (s *source) set(id string, ended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = feed.State{ID: id, Data: []byte(`{"id":"` + id + `"}`), Ended: ended}
}

func (s *source) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

func (s *source) read(ctx context.Context, _ string) (feed.State, error) {
	s.reads.Add(1)
	s.mu.Lock()
	gate := s.gate
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return feed.State{}, ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.err
}

// start runs a hub over src until the test ends; stop ends it sooner.
func start(t *testing.T, src *source, gap time.Duration) (h *feed.Hub, stop func()) {
	t.Helper()
	h = feed.New(src.read, gap, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.Run(ctx)
	}()
	stop = func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return h, stop
}

// next waits for w's next state.
func next(t *testing.T, w *feed.Watcher) feed.State {
	t.Helper()
	select {
	case <-w.Ready():
	case <-time.After(wait):
		require.FailNow(t, "no state came")
	}
	st, ok := w.Next()
	require.True(t, ok)
	return st
}

func TestOneReadServesEveryWatcherOfARun(t *testing.T) {
	t.Parallel()
	src := &source{}
	src.set("v1", false)
	h, _ := start(t, src, 0)
	a, b := h.Watch("r1"), h.Watch("r1")
	defer a.Close()
	defer b.Close()
	other := h.Watch("r2")
	defer other.Close()
	assert.Equal(t, 2, h.Watching())

	h.Changed("r1")
	assert.Equal(t, "v1", next(t, a).ID)
	assert.Equal(t, "v1", next(t, b).ID)
	assert.EqualValues(t, 1, src.reads.Load(), "one read for both watchers")
	_, ok := other.Next()
	assert.False(t, ok, "a run that did not change is not read for its watchers")
}

func TestChangesHeardDuringAReadAreReadTogether(t *testing.T) {
	t.Parallel()
	src := &source{gate: make(chan struct{})}
	src.set("v1", false)
	h, _ := start(t, src, 0)
	w := h.Watch("r1")
	defer w.Close()

	h.Changed("r1")
	require.Eventually(t, func() bool { return src.reads.Load() == 1 }, wait, tick, "the first change is read at once")
	for i := range 10 {
		src.set(fmt.Sprintf("v%d", i+2), false)
		h.Changed("r1")
	}
	src.gate <- struct{}{} // the first read, under way before the ten changes, answers
	require.Eventually(t, func() bool { return len(w.Ready()) == 1 }, wait, tick)
	src.set("v12", false)
	src.gate <- struct{}{} // the ten changes heard meanwhile, read once
	require.Eventually(t, func() bool {
		st, ok := w.Next()
		return ok && st.ID == "v12"
	}, wait, tick)
	assert.EqualValues(t, 2, src.reads.Load(), "ten changes during a read make one more read")
}

func TestASlowWatcherIsGivenTheLatestStateNotABacklog(t *testing.T) {
	t.Parallel()
	src := &source{}
	h, _ := start(t, src, time.Millisecond)
	w := h.Watch("r1")
	defer w.Close()
	for i := range 5 {
		src.set(fmt.Sprintf("v%d", i), false)
		h.Changed("r1")
		require.Eventually(t, func() bool { return src.reads.Load() == int64(i+1) }, wait, tick)
	}
	// Each read's state is offered before the next read begins: once a sixth read is
	// under way (held), the fifth's is offered.
	gate := make(chan struct{})
	src.mu.Lock()
	src.gate = gate
	src.mu.Unlock()
	h.Changed("r1")
	require.Eventually(t, func() bool { return src.reads.Load() == 6 }, wait, tick)
	st, ok := w.Next()
	require.True(t, ok)
	assert.Equal(t, "v4", st.ID)
	_, ok = w.Next()
	assert.False(t, ok, "nothing older is kept")
	close(gate)
}

func TestAWatchLeftIsForgotten(t *testing.T) {
	t.Parallel()
	src := &source{}
	src.set("v1", false)
	h, _ := start(t, src, 0)
	a, b := h.Watch("r1"), h.Watch("r1")
	a.Close()
	assert.Equal(t, 1, h.Watching())
	b.Close()
	assert.Equal(t, 0, h.Watching())
	h.Changed("r1")
	c := h.Watch("r1")
	defer c.Close()
	h.Changed("r1")
	assert.Equal(t, "v1", next(t, c).ID)
	assert.EqualValues(t, 1, src.reads.Load(), "a run nobody watches is not read")
}

// syncBuffer is a stream's body as the client reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func event(id string) string {
	return "id: " + id + "\nevent: run\ndata: {\"id\":\"" + id + "\"}\n\n"
}

// serve runs feed.Serve of a watch of r1 from first until it returns.
func serve(ctx context.Context, h *feed.Hub, out *syncBuffer, first string, keepAlive time.Duration) (*feed.Watcher, chan error) {
	w := h.Watch("r1")
	done := make(chan error, 1)
	go func() {
		defer w.Close()
		done <- feed.Serve(ctx, out, feed.State{ID: first, Data: []byte(`{"id":"` + first + `"}`)}, w, keepAlive)
	}()
	return w, done
}

func result(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(wait):
		require.FailNow(t, "the stream did not end")
		return nil
	}
}

func TestAStream(t *testing.T) {
	t.Parallel()
	gone := apperr.New(apperr.WorkflowRunNotFound, "Workflow run 'r1' was not found.")
	tests := []struct {
		name string
		// end makes the stream end, once its first change is out.
		end     func(src *source, h *feed.Hub, stopHub, cancel func())
		wantErr error
		want    string
	}{
		{name: "ends properly after the run's final state", end: func(src *source, h *feed.Hub, _, _ func()) {
			src.set("v3", true)
			h.Changed("r1")
		}, want: event("v1") + event("v2") + event("v3")},
		{name: "is cut short when the service shuts down", end: func(_ *source, _ *feed.Hub, stopHub, _ func()) { stopHub() },
			wantErr: feed.ErrStopped, want: event("v1") + event("v2")},
		{name: "is cut short when the client leaves", end: func(_ *source, _ *feed.Hub, _, cancel func()) { cancel() },
			wantErr: context.Canceled, want: event("v1") + event("v2")},
		{name: "is cut short when the run is gone", end: func(src *source, h *feed.Hub, _, _ func()) {
			src.fail(gone)
			h.Changed("r1")
		}, wantErr: gone, want: event("v1") + event("v2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := &source{}
			h, stopHub := start(t, src, time.Millisecond)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := &syncBuffer{}
			_, done := serve(ctx, h, out, "v1", time.Hour)
			src.set("v1", false)
			h.Changed("r1") // unchanged: not sent again
			require.Eventually(t, func() bool { return src.reads.Load() == 1 }, wait, tick)
			src.set("v2", false)
			h.Changed("r1")
			require.Eventually(t, func() bool { return strings.Contains(out.String(), event("v2")) }, wait, tick)
			tt.end(src, h, stopHub, cancel)
			err := result(t, done)
			if tt.wantErr == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.wantErr)
			}
			assert.Equal(t, tt.want, out.String())
			require.Eventually(t, func() bool { return h.Watching() == 0 }, wait, tick, "the watch is left")
		})
	}
}

func TestAStreamOfAnEndedRunIsItsStateAlone(t *testing.T) {
	t.Parallel()
	h, _ := start(t, &source{}, 0)
	w := h.Watch("r1")
	defer w.Close()
	out := &syncBuffer{}
	err := feed.Serve(context.Background(), out, feed.State{ID: "v9", Data: []byte(`{"id":"v9"}`), Ended: true}, w, 0)
	require.NoError(t, err)
	assert.Equal(t, event("v9"), out.String())
}

func TestAQuietStreamSendsKeepAlives(t *testing.T) {
	t.Parallel()
	h, _ := start(t, &source{}, 0)
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	_, done := serve(ctx, h, out, "v1", time.Millisecond)
	require.Eventually(t, func() bool { return strings.Count(out.String(), ": keep-alive\n\n") >= 2 }, wait, tick)
	cancel()
	assert.ErrorIs(t, result(t, done), context.Canceled)
	assert.True(t, strings.HasPrefix(out.String(), event("v1")))
}

func TestAStateIsNamedByWhatItShowsNotByHowLongItRan(t *testing.T) {
	t.Parallel()
	base := view.Run{ID: "r1", Status: "running", Phase: "running", Duration: 10,
		Tasks: []view.TaskRun{{ID: "r1.1", Status: "running", Duration: 10}}}
	later := base
	later.Duration = 99
	later.Tasks = []view.TaskRun{{ID: "r1.1", Status: "running", Duration: 99}}
	moved := base
	moved.Tasks = []view.TaskRun{{ID: "r1.1", Status: "succeeded", Duration: 10}}
	id := func(v view.Run) string {
		st, err := feed.StateOf(v)
		require.NoError(t, err)
		return st.ID
	}
	assert.Equal(t, id(base), id(later))
	assert.NotEqual(t, id(base), id(moved))
	assert.Equal(t, int64(10), base.Tasks[0].Duration, "the run rendered is left as it was")

	tests := []struct {
		phase string
		ended bool
	}{{"pending", false}, {"queued", false}, {"running", false}, {"completed", true}, {"finalized", true}}
	for _, tt := range tests {
		v := base
		v.Phase = tt.phase
		st, err := feed.StateOf(v)
		require.NoError(t, err)
		assert.Equal(t, tt.ended, st.Ended, tt.phase)
		assert.Contains(t, string(st.Data), `"duration":10`, "the state sent keeps the duration")
	}
}

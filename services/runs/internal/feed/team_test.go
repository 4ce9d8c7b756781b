package feed_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/runs/internal/feed"
)

// runs are runs of several teams whose summaries the test sets; reads are counted.
type runs struct {
	mu    sync.Mutex
	by    map[string]feed.Summary
	reads atomic.Int64
}

func (r *runs) set(run, team, workflow, status string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := fmt.Sprintf("%s/%s/%d", run, status, n)
	r.by[run] = feed.Summary{State: feed.State{ID: id, Data: []byte(`"` + id + `"`)}, Run: run, Team: team, Workflow: workflow, Status: status}
}

func (r *runs) read(_ context.Context, run string) (feed.Summary, error) {
	r.reads.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.by[run], nil
}

func startTeams(t *testing.T) (*feed.Hub, *runs, func()) {
	t.Helper()
	src := &runs{by: map[string]feed.Summary{}}
	h := feed.New((&source{}).read, time.Millisecond, nil).WithTeams(src.read)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.Run(ctx)
	}()
	stop := func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return h, src, stop
}

// ids waits for w's next summaries and answers their ids.
func ids(t *testing.T, w *feed.TeamWatcher) []string {
	t.Helper()
	select {
	case <-w.Ready():
	case <-time.After(wait):
		require.FailNow(t, "nothing came")
	}
	var out []string
	for _, s := range w.Next() {
		out = append(out, s.ID)
	}
	return out
}

func team(name string) func() string { return func() string { return name } }

func TestATeamsWatchersAreSentItsRunsThatTheyAskFor(t *testing.T) {
	t.Parallel()
	h, src, _ := startTeams(t)
	all := h.WatchTeam("infra", feed.TeamFilter{})
	defer all.Close()
	builds := h.WatchTeam("infra", feed.TeamFilter{Workflows: []string{"build"}, Statuses: []string{"failed"}})
	defer builds.Close()
	none := h.WatchTeam("infra", feed.TeamFilter{None: true})
	defer none.Close()
	other := h.WatchTeam("ops", feed.TeamFilter{})
	defer other.Close()

	src.set("r1", "infra", "build", "running", 1)
	h.ChangedIn("r1", team("infra"))
	assert.Equal(t, []string{"r1/running/1"}, ids(t, all))
	src.set("r1", "infra", "build", "failed", 2)
	h.ChangedIn("r1", nil) // a task run's event: the team is remembered
	assert.Equal(t, []string{"r1/failed/2"}, ids(t, all))
	assert.Equal(t, []string{"r1/failed/2"}, ids(t, builds), "only the failed build")
	src.set("r2", "ops", "deploy", "running", 1)
	h.ChangedIn("r2", team("ops"))
	assert.Equal(t, []string{"r2/running/1"}, ids(t, other))
	assert.EqualValues(t, 3, src.reads.Load(), "one read per change for all the team's watchers")
	assert.Empty(t, none.Next())
	assert.Empty(t, all.Next(), "another team's run is not sent")
}

func TestARunOfATeamNotToldIsReadAndSentToItsTeam(t *testing.T) {
	t.Parallel()
	h, src, _ := startTeams(t)
	infra := h.WatchTeam("infra", feed.TeamFilter{})
	defer infra.Close()
	ops := h.WatchTeam("ops", feed.TeamFilter{})
	defer ops.Close()
	src.set("r1", "ops", "deploy", "running", 1)
	h.ChangedIn("r1", nil)
	assert.Equal(t, []string{"r1/running/1"}, ids(t, ops))
	require.Eventually(t, func() bool { return src.reads.Load() == 2 }, wait, tick, "each team watched reads it")
	assert.Empty(t, infra.Next())
}

func TestASlowTeamWatcherIsGivenEachRunsLatestSummary(t *testing.T) {
	t.Parallel()
	h, src, _ := startTeams(t)
	w := h.WatchTeam("infra", feed.TeamFilter{})
	defer w.Close()
	for i := range 3 {
		for _, run := range []string{"r1", "r2"} {
			src.set(run, "infra", "build", "running", i)
			h.ChangedIn(run, team("infra"))
		}
		require.Eventually(t, func() bool { return src.reads.Load() >= int64(2*(i+1)) }, wait, tick)
	}
	// Nothing taken so far: each run's summaries wait as one, the latest.
	var got map[string]string
	require.Eventually(t, func() bool {
		next := w.Next()
		assert.LessOrEqual(t, len(next), 2, "one summary per run")
		for _, s := range next {
			if got == nil {
				got = map[string]string{}
			}
			got[s.Run] = s.ID
		}
		return got["r1"] == "r1/running/2" && got["r2"] == "r2/running/2"
	}, wait, tick)
}

func TestATeamsStreamIsCutShortWhenTheServiceShutsDownOrTheClientLeaves(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		end     func(stop, cancel func())
		wantErr error
	}{
		{"shutdown", func(stop, _ func()) { stop() }, feed.ErrStopped},
		{"client gone", func(_, cancel func()) { cancel() }, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, src, stop := startTeams(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := h.WatchTeam("infra", feed.TeamFilter{})
			out := &syncBuffer{}
			done := make(chan error, 1)
			go func() {
				defer w.Close()
				done <- feed.ServeTeam(ctx, out, w, time.Hour)
			}()
			src.set("r1", "infra", "build", "running", 1)
			h.ChangedIn("r1", team("infra"))
			require.Eventually(t, func() bool { return out.String() == "id: r1/running/1\nevent: run\ndata: \"r1/running/1\"\n\n" }, wait, tick)
			tt.end(stop, cancel)
			assert.ErrorIs(t, result(t, done), tt.wantErr)
		})
	}
}

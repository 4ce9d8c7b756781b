package client_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/client"
)

// streamServer answers a run's stream: on each opening, the events of the next of
// openings (a cut one is left without its body's end by hijacking its connection), and
// records each opening's Last-Event-ID. Any other request fails the test: a server with
// the stream is not polled.
type streamServer struct {
	mu       sync.Mutex
	openings [][]string // each opening's events, as "id status/phase"
	cut      []bool     // whether the opening is cut short after its events
	lastIDs  []string
}

func (s *streamServer) handle(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v2/team/infra/workflowrun/r1/watch" {
			assert.Fail(t, "a request beside the stream", r.URL.Path)
			http.NotFound(w, r)
			return
		}
		assert.Equal(t, "text/event-stream", r.Header.Get("Accept"))
		s.mu.Lock()
		n := len(s.lastIDs)
		s.lastIDs = append(s.lastIDs, r.Header.Get("Last-Event-ID"))
		s.mu.Unlock()
		require.Less(t, n, len(s.openings), "no opening after the run ended")
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = fmt.Fprint(w, ": keep-alive\n\n")
		for _, ev := range s.openings[n] {
			var id, status, phase string
			_, _ = fmt.Sscanf(ev, "%s %s %s", &id, &status, &phase)
			_, _ = fmt.Fprintf(w, "id: %s\nevent: run\ndata: {\"id\":\"r1\",\"status\":%q,\"phase\":%q}\n\n", id, status, phase)
		}
		w.(http.Flusher).Flush()
		if s.cut[n] {
			conn, _, err := w.(http.Hijacker).Hijack()
			require.NoError(t, err)
			_ = conn.Close() // the chunked body's end never comes
		}
	}
}

func TestWatchFollowsTheRunsStreamAndOpensItAgainWhenCut(t *testing.T) {
	t.Parallel()
	s := &streamServer{
		openings: [][]string{
			{"a ready pending", "b running running"},
			{"b running running", "c running running", "d succeeded completed"},
		},
		cut: []bool{true, false},
	}
	c := serve(t, s.handle(t))
	var seen []string
	for run, err := range c.Watch(t.Context(), "infra", "r1") {
		require.NoError(t, err)
		seen = append(seen, run.Status+"/"+run.Phase)
	}
	// The state sent again on reopening is not yielded again; c differs from b only in
	// what Watch does not compare, so it is not yielded either.
	assert.Equal(t, []string{"ready/pending", "running/running", "succeeded/completed"}, seen)
	assert.Equal(t, []string{"", "b"}, s.lastIDs, "reopened with the last event's id")
}

func TestWatchWorkflowRunYieldsEveryStateSent(t *testing.T) {
	t.Parallel()
	s := &streamServer{openings: [][]string{{"a running running", "b running running", "c failed completed"}}, cut: []bool{false}}
	c := serve(t, s.handle(t))
	var seen []string
	for run, err := range c.WatchWorkflowRun(t.Context(), "infra", "r1") {
		require.NoError(t, err)
		seen = append(seen, run.Status)
	}
	assert.Equal(t, []string{"running", "running", "failed"}, seen)
}

func TestWatchWorkflowRunSaysWhenTheServerHasNoStream(t *testing.T) {
	t.Parallel()
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"status": 404, "reason": "ROUTE_NOT_FOUND", "code": 1005, "message": "No endpoint.", "path": r.URL.Path})
	})
	var errs []error
	for _, err := range c.WatchWorkflowRun(t.Context(), "infra", "r1") {
		errs = append(errs, err)
	}
	require.Len(t, errs, 1)
	assert.ErrorContains(t, errs[0], "no stream of runs")
}

func TestWatchOfARunNotFoundIsItsError(t *testing.T) {
	t.Parallel()
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"status": 404, "reason": "WORKFLOWRUN_NOT_FOUND", "code": 1306, "message": "no", "path": r.URL.Path})
	})
	var errs []error
	for _, err := range c.Watch(t.Context(), "infra", "nope") {
		errs = append(errs, err)
	}
	require.Len(t, errs, 1)
	assert.True(t, client.HasReason(errs[0], "WORKFLOWRUN_NOT_FOUND"), "not polled: the stream's answer is the run's")
}

func TestWatchWorkflowRunsYieldsEachRunChangedUntilCut(t *testing.T) {
	t.Parallel()
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/api/v2/team/infra/workflowrun/watch", r.URL.Path)
		assert.Equal(t, "build,test", r.URL.Query().Get("workflows"))
		assert.Equal(t, "failed", r.URL.Query().Get("statuses"))
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, "id: a\nevent: run\ndata: {\"id\":\"r1\",\"status\":\"failed\",\"phase\":\"completed\"}\n\n"+
			": keep-alive\n\nid: b\nevent: run\ndata: {\"id\":\"r2\",\"status\":\"failed\",\"phase\":\"completed\"}\n\n")
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		require.NoError(t, err)
		_ = conn.Close()
	})
	var ids []string
	var errs []error
	for run, err := range c.WatchWorkflowRuns(t.Context(), "infra", client.RunWatchQuery{Workflows: []string{"build", "test"}, Statuses: []string{"failed"}}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ids = append(ids, run.ID)
	}
	assert.Equal(t, []string{"r1", "r2"}, ids, "an ended run does not end a team's stream")
	require.Len(t, errs, 1)
	assert.ErrorContains(t, errs[0], "unexpected EOF")
}

package runs_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
)

// sseRun is one event of a run's stream, as read.
type sseRun struct {
	id, name string
	run      map[string]any
}

// readEvent reads the stream's next event, skipping comments; io.EOF at its end.
func readEvent(t *testing.T, r *bufio.Reader) (sseRun, error) {
	t.Helper()
	var ev sseRun
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && ev.run != nil:
			return ev, nil
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.run))
		}
	}
}

// A run's watch, straight on the runs service: the run as it is, its changes as the
// runner reports them, and the end with the run; a workflow's token of another workflow
// and a member of another team are answered as a read of the run is.
func TestWatchStreamsARunUntilItEnds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	build := map[string]any{"name": "build", "type": "script", "params": []map[string]any{{"name": "script", "value": "make"}}}
	f.defs.put("infra", chain("watched", build))
	id := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/watched/submit?start=true", nil).body["id"].(string)
	taskRun := id + ".1"
	f.consume(t, events.TaskDispatch, func(e event.Event) bool { return e.ID() == taskRun+"/1" })

	// Over a real connection, to read the stream while it is written.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = f.app.Listener(ln) }()
	t.Cleanup(func() { _ = ln.Close() })
	open := func(p auth.Principal) *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+ln.Addr().String()+infra+"/workflowrun/"+id+"/watch", nil)
		require.NoError(t, err)
		require.NoError(t, f.signer.SetHeaders(p, req.Header.Set))
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { _ = res.Body.Close() })
		return res
	}

	for _, tt := range []struct {
		name   string
		p      auth.Principal
		status int
	}{
		{"another workflow's token", auth.Principal{Type: auth.TypeWorkflow, ID: "infra/other", Team: "infra", Workflow: "other",
			Permissions: []string{"**/read"}}, http.StatusNotFound},
		{"a member of another team", outsider, http.StatusForbidden},
	} {
		res := open(tt.p)
		assert.Equal(t, tt.status, res.StatusCode, tt.name)
		assert.Contains(t, res.Header.Get("Content-Type"), "application/json", tt.name)
	}

	res := open(reader)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	assert.Equal(t, "no-cache", res.Header.Get("Cache-Control"))
	body := bufio.NewReader(res.Body)
	first, err := readEvent(t, body)
	require.NoError(t, err)
	assert.Equal(t, "run", first.name)
	assert.NotEmpty(t, first.id)
	assert.Equal(t, id, first.run["id"])
	assert.Equal(t, "running", first.run["status"])
	require.Len(t, first.run["tasks"], 3, "the run as a read answers it, with its task runs")

	f.must(t, http.StatusOK, service, http.MethodPost, "/internal/v1/taskruns/"+taskRun+"/claim", map[string]any{"attempt": 1, "runner": "r1"})
	f.publishUpdate(t, events.TaskUpdate{TaskRunID: taskRun, RunID: id, Attempt: 1, Kind: events.UpdateEnded, Status: "succeeded"})
	last := first
	for {
		ev, err := readEvent(t, body)
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "the stream ends properly with the run")
		assert.NotEqual(t, last.id, ev.id, "a state is sent once")
		last = ev
	}
	assert.Equal(t, "succeeded", last.run["status"])
	assert.Equal(t, "completed", last.run["phase"])
	for _, task := range last.run["tasks"].([]any) {
		assert.Equal(t, "succeeded", task.(map[string]any)["status"])
	}
}

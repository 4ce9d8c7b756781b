package standalone_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/contract"
	"github.com/baton-flow/baton/libs/client"
)

// watchEvent is one event of a run's stream, as a client got it.
type watchEvent struct {
	id, name string
	run      client.WorkflowRun
	at       time.Time
}

// watchStream is a run's stream being read: its events as they come, and how it ended.
type watchStream struct {
	resp *http.Response
	mu   sync.Mutex
	evs  []watchEvent
	// keepAlives counts the comment lines.
	keepAlives int
	end        chan error // io.EOF when the stream ended properly
}

func (s *watchStream) events() []watchEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]watchEvent(nil), s.evs...)
}

// openWatch opens the stream of run id of team with token; a refusal is answered as the
// response, its body unread.
func openWatch(t *testing.T, base, token, team, id string) (*watchStream, *http.Response) {
	t.Helper()
	return openStream(t, base+"/api/v2/team/"+team+"/workflowrun/"+id+"/watch", token)
}

// openStream opens the stream at url with token; a refusal is answered as the response,
// its body unread.
func openStream(t *testing.T, url, token string) (*watchStream, *http.Response) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := contract.Client(t, nil).Do(req)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		t.Cleanup(func() { _ = resp.Body.Close() })
		return nil, resp
	}
	s := &watchStream{resp: resp, end: make(chan error, 1)}
	t.Cleanup(func() { _ = resp.Body.Close() })
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		var ev watchEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				s.mu.Lock()
				s.evs = append(s.evs, ev)
				s.mu.Unlock()
				ev = watchEvent{}
			case strings.HasPrefix(line, ":"):
				s.mu.Lock()
				s.keepAlives++
				s.mu.Unlock()
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.at = time.Now()
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.run); err != nil {
					s.end <- err
					return
				}
			}
		}
		s.end <- cmpErr(sc.Err())
	}()
	return s, resp
}

func cmpErr(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

// gatedWorkflow is three script tasks in a row, each waiting at its FIFO in the
// directory of the run's param gates until the test lets it go.
func gatedWorkflow(name string) *client.Workflow {
	w := &client.Workflow{Name: name, Params: []client.AbstractParam{{Name: "gates", Type: "text"}},
		Tasks: []client.WorkflowTask{{Name: "start", Type: "start"}}}
	prev := "start"
	for _, task := range []string{"one", "two", "three"} {
		w.Tasks = append(w.Tasks, client.WorkflowTask{Name: task, Type: "script",
			Dependencies: []client.TaskDependency{{TaskRef: prev}},
			Params:       []client.NameValue{{Name: "script", Value: "read go < $(params.gates)/" + task}}})
		prev = task
	}
	w.Tasks = append(w.Tasks, client.WorkflowTask{Name: "end", Type: "end", Dependencies: []client.TaskDependency{{TaskRef: prev}}})
	return w
}

// submitGated submits a run of the gated workflow with gates of its own, started.
func submitGated(t *testing.T, c *client.Client) (run *client.WorkflowRun, gates string) {
	t.Helper()
	gates = t.TempDir()
	for _, task := range []string{"one", "two", "three"} {
		require.NoError(t, syscall.Mkfifo(filepath.Join(gates, task), 0o600))
	}
	run, err := c.SubmitWorkflow(t.Context(), "watch", "gated", &client.WorkflowSubmitRequest{Params: map[string]any{"gates": gates}}, true)
	require.NoError(t, err)
	return run, gates
}

// release lets the gated task go, once it waits at its gate.
func release(t *testing.T, gates, task string) time.Time {
	t.Helper()
	var f *os.File
	require.Eventually(t, func() bool {
		var err error
		f, err = os.OpenFile(filepath.Join(gates, task), os.O_WRONLY|syscall.O_NONBLOCK, 0)
		return err == nil // ENXIO until the task opens its end
	}, time.Minute, time.Millisecond, "task %s waits at its gate", task)
	at := time.Now()
	_, err := f.WriteString("go\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return at
}

// shape is what the test compares of a run: its status and phase and its three tasks'.
func shape(r client.WorkflowRun) string {
	s := r.Status + "/" + r.Phase
	for _, name := range []string{"one", "two", "three"} {
		task, _ := r.Task(name)
		st := "-"
		if task != nil {
			st = task.Status
		}
		s += " " + name + ":" + st
	}
	return s
}

// TestIntegrationWatch follows runs through the gateway: a watcher sees each state a
// run of three tasks passes through, in order, and the stream ends with the run; another
// team's token is refused with the contract's error; the SDK's Watch follows the stream;
// a team's stream sends its runs' summaries as they change; a stream ends, cut short,
// when the instance shuts down.
func TestIntegrationWatch(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0",
		"BATON_LOG_LEVEL": "error", "BATON_RATE_LIMIT": "0"})
	// A poll interval no test waits out: a Watch that polled would not end.
	c, err := client.New(b.url, client.WithToken(b.token), client.WithHTTPClient(contract.Client(t, nil)),
		client.WithPollInterval(time.Hour))
	require.NoError(t, err)
	ctx := t.Context()
	for _, team := range []string{"watch", "other"} {
		_, err = c.CreateTeam(ctx, &client.TeamRequest{Name: team})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		_, _, err := c.ApplyWorkflow(ctx, "watch", gatedWorkflow("gated"))
		return err == nil
	}, 30*time.Second, 20*time.Millisecond, "the workflows service learns of the team through its event")

	t.Run("every state in order, and the end", func(t *testing.T) {
		run, gates := submitGated(t, c)
		s, resp := openWatch(t, b.url, b.token, "watch", run.ID)
		require.NotNil(t, s, "status %d", resp.StatusCode)
		assert.Equal(t, "text/event-stream", s.resp.Header.Get("Content-Type"))

		want := []string{
			"running/running one:running two:notstarted three:notstarted",
			"running/running one:succeeded two:running three:notstarted",
			"running/running one:succeeded two:succeeded three:running",
			"succeeded/completed one:succeeded two:succeeded three:succeeded",
		}
		next := 0 // the first event not matched yet
		for i, w := range want {
			require.Eventually(t, func() bool {
				evs := s.events()
				for j := next; j < len(evs); j++ {
					if shape(evs[j].run) == w {
						next = j + 1
						return true
					}
				}
				return false
			}, time.Minute, 5*time.Millisecond, "state %d, %q, after %v", i, w, shapes(s.events()))
			if i < 3 {
				released := release(t, gates, []string{"one", "two", "three"}[i])
				// Measured by hand, not asserted: from a task's end in the run to its event here.
				t.Cleanup(func() { logDelay(t, s, []string{"one", "two", "three"}[i], released) })
			}
		}
		assert.ErrorIs(t, within(t, s.end, "the stream's end"), io.EOF, "the stream ends properly with the run")
		evs := s.events()
		assert.Equal(t, want[3], shape(evs[len(evs)-1].run), "the run's final state is the last event")
		for _, ev := range evs {
			assert.Equal(t, "run", ev.name)
			assert.NotEmpty(t, ev.id)
		}

		// Watching an ended run: its final state, and the end.
		again, _ := openWatch(t, b.url, b.token, "watch", run.ID)
		require.NotNil(t, again)
		assert.ErrorIs(t, within(t, again.end, "the stream's end"), io.EOF)
		require.Len(t, again.events(), 1)
		assert.Equal(t, evs[len(evs)-1].id, again.events()[0].id, "an unchanged run keeps its state's id")
	})

	t.Run("refusals are the contract's errors", func(t *testing.T) {
		run, _ := submitGated(t, c)
		t.Cleanup(func() { _, _ = c.CancelWorkflowRun(ctx, "watch", run.ID) })
		tok, err := c.CreateToken(ctx, &client.TokenCreateRequest{Type: "team", Principal: "other", Permissions: []string{"**/read"}})
		require.NoError(t, err)
		tests := []struct {
			name, token, team, id string
			status                int
			reason                string
		}{
			{"another team's token", tok.Token, "watch", run.ID, http.StatusForbidden, ""},
			{"another team's token in its own team", tok.Token, "other", run.ID, http.StatusNotFound, "WORKFLOWRUN_NOT_FOUND"},
			{"no such run", b.token, "watch", "nope", http.StatusNotFound, "WORKFLOWRUN_NOT_FOUND"},
			{"no credentials", "", "watch", run.ID, http.StatusUnauthorized, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s, resp := openWatch(t, b.url, tt.token, tt.team, tt.id)
				require.Nil(t, s, "a stream where an error was due")
				assert.Equal(t, tt.status, resp.StatusCode)
				assert.Contains(t, resp.Header.Get("Content-Type"), "application/json")
				var body struct{ Reason string }
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
				if tt.reason != "" {
					assert.Equal(t, tt.reason, body.Reason)
				}
			})
		}
	})

	t.Run("the SDK's Watch follows the stream", func(t *testing.T) {
		run, gates := submitGated(t, c)
		type seen struct {
			states []string
			err    error
		}
		states := make(chan string, 16)
		done := make(chan seen, 1)
		go func() {
			var s seen
			for r, err := range c.Watch(ctx, "watch", run.ID) {
				if err != nil {
					s.err = err
					break
				}
				s.states = append(s.states, shape(*r))
				states <- shape(*r)
			}
			close(states)
			done <- s
		}()
		for _, task := range []string{"one", "two", "three"} {
			for st := range states {
				if strings.Contains(st, task+":running") {
					break
				}
			}
			release(t, gates, task)
		}
		for range states {
		}
		s := within(t, done, "the watch's end")
		require.NoError(t, s.err)
		require.NotEmpty(t, s.states)
		assert.Equal(t, "succeeded/completed one:succeeded two:succeeded three:succeeded", s.states[len(s.states)-1])
	})

	t.Run("a team's runs as they change", func(t *testing.T) {
		team, resp := openStream(t, b.url+"/api/v2/team/watch/workflowrun/watch?workflows=gated&statuses=running,succeeded", b.token)
		require.NotNil(t, team, "status %d", resp.StatusCode)
		assert.Equal(t, "text/event-stream", team.resp.Header.Get("Content-Type"))
		run, gates := submitGated(t, c)
		for _, task := range []string{"one", "two", "three"} {
			release(t, gates, task)
		}
		require.Eventually(t, func() bool {
			evs := team.events()
			return len(evs) > 0 && evs[len(evs)-1].run.ID == run.ID && evs[len(evs)-1].run.Status == client.StatusSucceeded
		}, time.Minute, 5*time.Millisecond, "the run's end reaches the team's stream")
		for _, ev := range team.events() {
			assert.Equal(t, run.ID, ev.run.ID, "only the run that changed")
			assert.Empty(t, ev.run.Tasks, "summaries, as the search answers them")
			assert.Contains(t, []string{"running", "succeeded"}, ev.run.Status, "only the statuses asked for")
		}

		other, err := c.CreateToken(ctx, &client.TokenCreateRequest{Type: "team", Principal: "other", Permissions: []string{"**/read"}})
		require.NoError(t, err)
		s, resp := openStream(t, b.url+"/api/v2/team/watch/workflowrun/watch", other.Token)
		require.Nil(t, s)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		s, resp = openStream(t, b.url+"/api/v2/team/watch/workflowrun/watch?statuses=bogus", b.token)
		require.Nil(t, s)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	})

	t.Run("a stream is cut short when the instance shuts down", func(t *testing.T) {
		run, _ := submitGated(t, c)
		s, resp := openWatch(t, b.url, b.token, "watch", run.ID)
		require.NotNil(t, s, "status %d", resp.StatusCode)
		require.Eventually(t, func() bool { return len(s.events()) > 0 }, time.Minute, 5*time.Millisecond)
		require.NoError(t, b.stop())
		err := within(t, s.end, "the stream's end")
		assert.True(t, errors.Is(err, io.ErrUnexpectedEOF), "cut short, without the body's end: %v", err)
	})
}

func shapes(evs []watchEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = shape(ev.run)
	}
	return out
}

// logDelay logs how long after task's end, as the run records it, its event reached the
// client, and after the test let it go.
func logDelay(t *testing.T, s *watchStream, task string, released time.Time) {
	for _, ev := range s.events() {
		tr, ok := ev.run.Task(task)
		if !ok || tr.Status != client.StatusSucceeded || tr.StartTime.IsZero() {
			continue
		}
		end := tr.StartTime.Add(time.Duration(tr.Duration) * time.Millisecond)
		t.Log(fmt.Sprintf("task %s: its event came %v after its end in the run, %v after it was let go",
			task, ev.at.Sub(end).Round(time.Millisecond), ev.at.Sub(released).Round(time.Millisecond)))
		return
	}
}

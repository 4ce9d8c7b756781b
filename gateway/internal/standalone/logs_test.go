package standalone_test

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/contract"
)

// followLog starts following task run id's log through the gateway and answers its lines
// as they arrive, then the error the stream ended with (nil when it ended properly).
func (b *baton) followLog(t *testing.T, id string) (<-chan string, <-chan error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, b.url+"/api/v2/taskrun/"+id+"/log?follow=true", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+b.token)
	// The head comes at once, before any line; a service that held the answer back until
	// the task ended would never give it here.
	type answer struct {
		res *http.Response
		err error
	}
	answers := make(chan answer, 1)
	client := contract.Client(t, nil)
	go func() {
		res, err := client.Do(req)
		answers <- answer{res, err}
	}()
	a := within(t, answers, "the head of the followed log")
	require.NoError(t, a.err)
	res := a.res
	t.Cleanup(func() { _ = res.Body.Close() })
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Type"), "text/plain")
	lines, ended := make(chan string, 16), make(chan error, 1)
	go func() {
		defer close(lines)
		s := bufio.NewScanner(res.Body)
		for s.Scan() {
			lines <- s.Text()
		}
		ended <- s.Err()
	}()
	return lines, ended
}

// within answers what ch gives, failing the test when nothing comes in a long while.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		require.FailNow(t, "nothing came", what)
		var zero T
		return zero
	}
}

// runTask creates team with workflow of one task, starts a run and answers the id of
// that task's run.
func (b *baton) runTask(t *testing.T, team, task string) string {
	t.Helper()
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"`+team+`"}`)
	require.Equal(t, http.StatusCreated, code, out)
	workflow := `{"name":"one","tasks":[{"name":"start","type":"start"},` + task + `,
		{"name":"end","type":"end","dependencies":[{"taskRef":"only"}]}]}`
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/"+team+"/workflow", b.token, workflow)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
	code, run := b.call(t, http.MethodPost, "/api/v2/team/"+team+"/workflow/one/submit?start=true", b.token, `{}`)
	require.Equal(t, http.StatusCreated, code, run)
	for _, tr := range run["tasks"].([]any) {
		if tr := tr.(map[string]any); tr["name"] == "only" {
			return tr["id"].(string)
		}
	}
	require.FailNow(t, "the run has no task named only", "%v", run)
	return ""
}

// A followed log gives each line while the task runs, through the gateway: the script
// prints a line, then waits for the test, which lets it go on only once the line has
// come. The stream ends, properly, when the task does.
func TestIntegrationFollowedLogStreamsWhileTheTaskRuns(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	gate := filepath.Join(t.TempDir(), "gate")
	require.NoError(t, syscall.Mkfifo(gate, 0o600))
	id := b.runTask(t, "stream", `{"name":"only","type":"script","dependencies":[{"taskRef":"start"}],
		"params":[{"name":"script","value":"echo first; read go < `+gate+`; echo second"}]}`)

	lines, ended := b.followLog(t, id)
	assert.Equal(t, "first", within(t, lines, "the first line while the task runs"))

	// Opening the gate for writing waits for the script to open it for reading.
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = io.WriteString(f, "go\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	assert.Equal(t, "second", within(t, lines, "the second line"))
	assert.NoError(t, within(t, ended, "the end of the stream with the task's"), "the stream ends properly")
	_, more := <-lines
	assert.False(t, more)
}

// A followed stream ends when the instance shuts down, and the shutdown's drain of
// requests completes rather than waiting for the task.
func TestIntegrationFollowedLogEndsAtShutdown(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error",
		// A drain that waited for the stream would outlast the test.
		"BATON_SHUTDOWN_TIMEOUT": "1h"})
	id := b.runTask(t, "halt", `{"name":"only","type":"sleep","dependencies":[{"taskRef":"start"}],
		"params":[{"name":"duration","value":600000}]}`)
	_, ended := b.followLog(t, id)

	stopped := make(chan error, 1)
	go func() { stopped <- b.stop() }()
	assert.NoError(t, within(t, stopped, "the end of the shutdown"))
	assert.Error(t, within(t, ended, "the end of the stream"), "a stream the shutdown stops is cut short, not ended as if the task had")
}

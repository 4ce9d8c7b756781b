package watch_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/cli/watch"
	"github.com/baton-flow/baton/libs/golden"
)

var t0 = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// gates is a running run with a task waiting at each kind of gate.
func gates() watch.Run {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	return watch.Run{ID: "r1", Workflow: "release", Version: 4, Status: "running", Phase: "running", Start: t0, Tasks: []watch.Task{
		{Name: "end", Type: "end", Dependencies: []string{"approve", "form", "callback", "lock", "nap"}},
		{Name: "start", Type: "start", Status: "succeeded"},
		{Name: "build", Type: "script", Status: "succeeded", Dependencies: []string{"start"}, Start: at(1), Duration: 42 * time.Second},
		{Name: "approve", Type: "approval", Status: "waiting", Dependencies: []string{"build"}, Start: at(43),
			Params: map[string]string{"approverGroupRef": "release-managers", "numberOfApprovers": "2"}, Approvers: []string{"ana@example.com", "bo@example.com"}},
		{Name: "form", Type: "manual", Status: "waiting", Dependencies: []string{"build"}, Start: at(43), Params: map[string]string{"instructions": "Give the change ticket\nand the window"}},
		{Name: "callback", Type: "eventwait", Status: "waiting", Dependencies: []string{"build"}, Start: at(43), Params: map[string]string{"topic": "smoke-done"}},
		{Name: "lock", Type: "acquirelock", Status: "waiting", Dependencies: []string{"build"}, Start: at(43), Params: map[string]string{"key": "prod-db"}},
		{Name: "nap", Type: "sleep", Status: "waiting", Dependencies: []string{"build"}, Start: at(43), Params: map[string]string{"duration": "600000"}},
		{Name: "lint", Type: "script", Status: "failed", Dependencies: []string{"start"}, Start: at(1), Duration: 3 * time.Second, Message: "exit code 2"},
	}}
}

// TestFrame pins the live view: tasks in the DAG's order indented by depth, each waiting
// gate saying what it waits for, a join listing what it waits after, the run's elapsed time.
func TestFrame(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		view watch.View
	}{
		{name: "frame-plain", view: watch.View{}},
		{name: "frame-colour", view: watch.View{Color: true}},
		{name: "frame-narrow", view: watch.View{Width: 40}},
		// Taller than the screen: what needs attention is kept, the rest summed up.
		{name: "frame-short", view: watch.View{Height: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := tt.view
			v.Now = func() time.Time { return t0.Add(100 * time.Second) }
			frame := v.Frame(gates())
			if v.Width > 0 {
				for _, l := range frame {
					assert.Less(t, len([]rune(l)), v.Width, "a line as wide as the terminal wraps: %q", l)
				}
			}
			if v.Height > 0 {
				assert.Less(t, len(frame), v.Height, "a frame as tall as the screen scrolls")
			}
			golden.MatchText(t, tt.name, []byte(strings.Join(frame, "\n")+"\n"))
		})
	}
}

// TestLines pins the output where stdout is no terminal: one line a change, none for what
// did not change.
func TestLines(t *testing.T) {
	t.Parallel()
	now := t0
	var out bytes.Buffer
	v := &watch.View{Out: &out, Now: func() time.Time { return now }}
	run := watch.Run{ID: "r1", Workflow: "hello", Version: 1, Status: "running", Start: t0, Tasks: []watch.Task{
		{Name: "start", Type: "start", Status: "succeeded"},
		{Name: "ok", Type: "approval", Status: "notstarted", Dependencies: []string{"start"}},
		{Name: "end", Type: "end", Dependencies: []string{"ok"}},
	}}
	step := func(d time.Duration, change func(r *watch.Run)) {
		now = now.Add(d)
		change(&run)
		require.NoError(t, v.Show(run))
	}
	step(0, func(*watch.Run) {})
	step(time.Second, func(r *watch.Run) {
		r.Tasks[1].Status, r.Tasks[1].Start, r.Tasks[1].Approvers = "waiting", now, []string{"ana"}
	})
	step(time.Second, func(*watch.Run) {}) // nothing changed: no line
	step(time.Minute, func(r *watch.Run) {
		r.Tasks[1].Status, r.Tasks[1].Duration = "succeeded", time.Minute
		r.Tasks[2].Status = "succeeded"
		r.Status, r.Duration = "succeeded", 62*time.Second
	})
	require.NoError(t, v.End(run))
	golden.MatchText(t, "lines", out.Bytes())
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status string
		want   int
	}{
		{"succeeded", 0}, {"skipped", 0}, {"failed", 3}, {"invalid", 3}, {"cancelled", 4}, {"timedout", 5}, {"running", 1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, watch.ExitCode(tt.status), tt.status)
	}
}

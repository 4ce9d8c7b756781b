package cli_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/gateway/internal/cli"
	"github.com/baton-flow/baton/gateway/internal/cli/config"
	"github.com/baton-flow/baton/gateway/internal/cli/watch"
	"github.com/baton-flow/baton/libs/client"
)

// fakeSource gives the run states a test sends.
type fakeSource struct {
	states  chan watch.Run
	watched chan string // team/run of each watch
}

func (f *fakeSource) source(*client.Client) watch.Source { return f }

func (f *fakeSource) Watch(ctx context.Context, team, run string, each func(watch.Run) error) error {
	if f.watched != nil {
		f.watched <- team + "/" + run
	}
	for {
		select {
		case r, ok := <-f.states:
			if !ok {
				return nil
			}
			if err := each(r); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// envFor is the environment of a command run by a test: its own config file, and the
// variables given.
func envFor(t *testing.T, vars map[string]string) func(string) string {
	t.Helper()
	all := map[string]string{config.EnvConfig: filepath.Join(t.TempDir(), "baton", "config.yaml")}
	for k, v := range vars {
		all[k] = v
	}
	return func(k string) string { return all[k] }
}

// liveRun is the run the live view tests go through: started, at an approval, rejected.
func liveRun(step int) watch.Run {
	now := time.Now()
	r := watch.Run{ID: "r1", Workflow: "release", Version: 2, Status: "running", Start: now.Add(-5 * time.Second), Tasks: []watch.Task{
		{Name: "start", Type: "start", Status: "succeeded"},
		{Name: "build", Type: "script", Status: "running", Dependencies: []string{"start"}, Start: now.Add(-4 * time.Second)},
		{Name: "approve", Type: "approval", Status: "notstarted", Dependencies: []string{"build"}},
		{Name: "end", Type: "end", Status: "notstarted", Dependencies: []string{"approve"}},
	}}
	if step >= 1 {
		r.Tasks[1].Status, r.Tasks[1].Duration = "succeeded", 3*time.Second
		r.Tasks[2].Status, r.Tasks[2].Start = "waiting", now.Add(-time.Second)
		r.Tasks[2].Approvers = []string{"ana@example.com"}
	}
	if step >= 2 {
		r.Tasks[2].Status, r.Tasks[2].Duration, r.Tasks[2].Message = "failed", 2*time.Second, "rejected by ana@example.com"
		r.Tasks[3].Status = "skipped"
		r.Status, r.Duration, r.StatusMessage = "failed", 7*time.Second, "task approve failed"
	}
	return r
}

// TestRunWatchExitCodes: without a terminal the view writes a line a change, and the exit
// code tells each outcome apart.
func TestRunWatchExitCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status string
		want   int
	}{
		{"succeeded", 0}, {"failed", 3}, {"cancelled", 4}, {"timedout", 5}, {"running", 1},
	}
	for _, tt := range tests {
		t.Run(tt.status, func(t *testing.T) {
			t.Parallel()
			api := &fakeSource{states: make(chan watch.Run, 2)}
			api.states <- watch.Run{ID: "r1", Workflow: "w", Status: "running", Tasks: []watch.Task{{Name: "start", Status: "running"}}}
			api.states <- watch.Run{ID: "r1", Workflow: "w", Status: tt.status, Tasks: []watch.Task{{Name: "start", Status: "succeeded"}}}
			close(api.states)
			var out, stderr bytes.Buffer
			code := cli.Main(context.Background(), []string{"run", "watch", "infra/r1"}, cli.Env{
				Getenv: envFor(t, map[string]string{config.EnvServer: "http://baton.test", config.EnvToken: "t"}),
				Stdout: &out, Stderr: &stderr,
				Source: api.source,
			})
			assert.Equal(t, tt.want, code, stderr.String())
			assert.NotContains(t, out.String(), "\x1b[", "no escape sequence where stdout is no terminal")
			assert.Contains(t, out.String(), "task start running\n")
			if tt.status != "running" {
				assert.Contains(t, out.String(), "run "+tt.status+"\n")
			} else {
				assert.Contains(t, stderr.String(), "stopped before it ended")
			}
		})
	}
}

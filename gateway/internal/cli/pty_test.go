//go:build !windows

package cli_test

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/cli"
	"github.com/baton-flow/baton/gateway/internal/cli/config"
	"github.com/baton-flow/baton/gateway/internal/cli/watch"
)

// TestRunWatchOnATerminal drives `baton run watch` on a real pseudo-terminal with a fake
// source of run states, and reads the screen after each state: the view is redrawn in
// place (the screen keeps its line count), each task's line shows its status, the waiting
// approval names its approver, statuses are coloured, and the exit code is the run's
// outcome.
func TestRunWatchOnATerminal(t *testing.T) {
	t.Parallel()
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	t.Cleanup(func() { _ = ptmx.Close() })
	require.NoError(t, pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}))
	scr := &screen{}
	go func() { _, _ = io.Copy(scr, ptmx) }()

	api := &fakeSource{states: make(chan watch.Run), watched: make(chan string, 1)}
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		defer tty.Close()
		code <- cli.Main(context.Background(), []string{"run", "watch", "r1", "--team", "infra"}, cli.Env{
			Getenv: envFor(t, map[string]string{config.EnvServer: "http://baton.test", config.EnvToken: "t"}),
			Stdin:  strings.NewReader(""), Stdout: tty, Stderr: &stderr,
			Source: api.source,
		})
	}()
	assert.Equal(t, "infra/r1", <-api.watched)

	states := []struct {
		name  string
		lines []string // a pattern a line of the screen, in order
	}{
		{name: "started", lines: []string{
			`^release v2  run r1$`,
			`^Status: running  \d+s$`,
			`^  ✓ start\s+succeeded$`,
			`^  ●   build\s+running\s+\d+s$`,
			`^  ○     approve\s+notstarted$`,
			`^  ○       end\s+notstarted$`,
		}},
		{name: "at the approval", lines: []string{
			`^release v2  run r1$`,
			`^Status: running  \d+s$`,
			`^  ✓ start\s+succeeded$`,
			`^  ✓   build\s+succeeded\s+3s$`,
			`^  ◷     approve\s+waiting\s+\d+s\s+for approval by ana@example.com$`,
			`^  ○       end\s+notstarted$`,
		}},
		{name: "rejected", lines: []string{
			`^release v2  run r1$`,
			`^Status: failed  7s  task approve failed$`,
			`^  ✓ start\s+succeeded$`,
			`^  ✓   build\s+succeeded\s+3s$`,
			`^  ✗     approve\s+failed\s+2s\s+rejected by ana@example.com$`,
			`^  -       end\s+skipped$`,
		}},
	}
	for i, st := range states {
		api.states <- liveRun(i)
		matches := func() bool {
			got := scr.text()
			if len(got) != len(st.lines) {
				return false
			}
			for j, p := range st.lines {
				if !regexp.MustCompile(p).MatchString(got[j]) {
					return false
				}
			}
			return true
		}
		require.Eventually(t, matches, 10*time.Second, 10*time.Millisecond,
			"screen %s:\n%s", st.name, strings.Join(scr.text(), "\n"))
	}
	close(api.states)
	assert.Equal(t, watch.ExitFailed, <-code, stderr.String())
	raw := scr.bytes()
	assert.Contains(t, raw, "\x1b[33mwaiting", "a waiting task is yellow on a terminal")
	assert.Contains(t, raw, "\x1b[31mfailed", "a failed task is red on a terminal")
	assert.Empty(t, stderr.String())
}

//go:build linux

package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
)

// output collects a step's output and tells when it contains a string.
type output struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newOutput() *output { return &output{changed: make(chan struct{})} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	close(o.changed)
	o.changed = make(chan struct{})
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor returns once the output contains s, failing the test after a while.
func (o *output) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		o.mu.Lock()
		has, changed := strings.Contains(o.buf.String(), s), o.changed
		o.mu.Unlock()
		if has {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("output never contained %q; got %q", s, o.String())
		}
	}
}

// execute runs a step with p in a fresh workspace and checks the workspace is gone after.
func execute(t *testing.T, ctx context.Context, p *Process, step Step, out *output) Outcome {
	t.Helper()
	step.Dir = filepath.Join(t.TempDir(), "run-1")
	o := p.Execute(ctx, step, out)
	p.Release(step)
	_, err := os.Stat(step.Dir)
	assert.ErrorIs(t, err, os.ErrNotExist, "the workspace is removed")
	return o
}

func code(n int) *int { return &n }

func TestProcessExit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		spec    events.TaskSpec
		want    Outcome
		wantOut string
	}{
		{
			name: "script succeeds",
			spec: events.TaskSpec{Script: "echo hello"},
			want: Outcome{Status: StatusSucceeded, ExitCode: code(0)}, wantOut: "hello\n",
		},
		{
			name: "script fails with its exit code",
			spec: events.TaskSpec{Script: "echo out; echo err >&2; exit 3"},
			want: Outcome{Status: StatusFailed, ExitCode: code(3), Message: "exit code 3"}, wantOut: "out\nerr\n",
		},
		{
			name: "command with args",
			spec: events.TaskSpec{Command: []string{"echo", "a"}, Args: []string{"b", "c"}},
			want: Outcome{Status: StatusSucceeded, ExitCode: code(0)}, wantOut: "a b c\n",
		},
		{
			name: "command fails",
			spec: events.TaskSpec{Command: []string{"sh", "-c", "exit 2"}},
			want: Outcome{Status: StatusFailed, ExitCode: code(2), Message: "exit code 2"},
		},
		{
			name: "shebang script runs directly",
			spec: events.TaskSpec{Script: "#!/bin/sh -e\nfalse\necho unreachable", Shell: "/nonexistent"},
			want: Outcome{Status: StatusFailed, ExitCode: code(1), Message: "exit code 1"},
		},
		{
			name: "shell with options",
			spec: events.TaskSpec{Script: "false\necho unreachable", Shell: "/bin/sh -e"},
			want: Outcome{Status: StatusFailed, ExitCode: code(1), Message: "exit code 1"},
		},
		{
			name: "environment",
			spec: events.TaskSpec{Script: `echo "$GREETING ${PATH:+path} ${HOME:+home}"`, Env: []events.EnvVar{{Name: "GREETING", Value: "hi"}}},
			want: Outcome{Status: StatusSucceeded, ExitCode: code(0)}, wantOut: "hi path home\n",
		},
		{
			name: "image is ignored with a note",
			spec: events.TaskSpec{Image: "alpine:3", Script: "echo ran"},
			want: Outcome{Status: StatusSucceeded, ExitCode: code(0)}, wantOut: "image alpine:3 ignored by the process executor\nran\n",
		},
		{
			name: "neither script nor command",
			spec: events.TaskSpec{Args: []string{"x"}},
			want: Outcome{Status: StatusFailed, Message: "the step has neither a script nor a command"},
		},
		{
			name: "working dir leaving the workspace",
			spec: events.TaskSpec{Script: "pwd", WorkingDir: "../elsewhere"},
			want: Outcome{Status: StatusFailed, Message: `working directory "../elsewhere" leaves the workspace`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := newOutput()
			got := execute(t, t.Context(), &Process{}, Step{Spec: tt.spec}, out)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantOut, out.String())
		})
	}
}

func TestProcessCommandNotFound(t *testing.T) {
	t.Parallel()
	got := execute(t, t.Context(), &Process{}, Step{Spec: events.TaskSpec{Command: []string{"baton-no-such-command"}}}, newOutput())
	assert.Equal(t, StatusFailed, got.Status)
	assert.Contains(t, got.Message, "executable file not found")
}

func TestProcessWorkingDir(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, give, want string
	}{
		{name: "default is the workspace", give: "", want: "/run-1\n"},
		{name: "relative is under the workspace", give: "src/app", want: "/run-1/src/app\n"},
		{name: "absolute as given", give: "/", want: "/\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := newOutput()
			got := execute(t, t.Context(), &Process{}, Step{Spec: events.TaskSpec{Script: "pwd", WorkingDir: tt.give}}, out)
			require.Equal(t, StatusSucceeded, got.Status, got.Message)
			assert.True(t, strings.HasSuffix(out.String(), tt.want), "pwd %q ends with %q", out.String(), tt.want)
		})
	}
}

func TestProcessResults(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", MaxResultSize)
	tests := []struct {
		name    string
		spec    events.TaskSpec
		results []string
		want    Outcome
	}{
		{
			name:    "script writes results; one trailing newline is trimmed",
			spec:    events.TaskSpec{Script: "echo hello > $(results.greeting.path)\nprintf 'a\\n\\n' > $(results.lines.path)"},
			results: []string{"greeting", "lines", "unset"},
			want:    Outcome{Status: StatusSucceeded, ExitCode: code(0), Results: map[string]string{"greeting": "hello", "lines": "a\n"}},
		},
		{
			name: "paths in command, args and env",
			spec: events.TaskSpec{
				Command: []string{"sh", "-c", `printf one > "$1"; printf two > "$TWO"`, "$(results.one.path)"},
				Args:    []string{"$(results.one.path)"},
				Env:     []events.EnvVar{{Name: "TWO", Value: "$(results.two.path)"}},
			},
			results: []string{"one", "two"},
			want:    Outcome{Status: StatusSucceeded, ExitCode: code(0), Results: map[string]string{"one": "one", "two": "two"}},
		},
		{
			name:    "results of a failed step are kept",
			spec:    events.TaskSpec{Script: "printf partial > $(results.r.path); exit 1"},
			results: []string{"r"},
			want:    Outcome{Status: StatusFailed, ExitCode: code(1), Message: "exit code 1", Results: map[string]string{"r": "partial"}},
		},
		{
			name:    "64 KiB and a newline fit",
			spec:    events.TaskSpec{Script: "echo " + long + " > $(results.big.path)"},
			results: []string{"big"},
			want:    Outcome{Status: StatusSucceeded, ExitCode: code(0), Results: map[string]string{"big": long}},
		},
		{
			name:    "over 64 KiB fails the attempt",
			spec:    events.TaskSpec{Script: "printf " + long + "b > $(results.big.path)"},
			results: []string{"big"},
			want:    Outcome{Status: StatusFailed, ExitCode: code(0), Message: "result big: is larger than 64 KiB"},
		},
		{
			name:    "a symlink is not read",
			spec:    events.TaskSpec{Script: "ln -s /etc/hostname $(results.link.path)"},
			results: []string{"link"},
			want:    Outcome{Status: StatusFailed, ExitCode: code(0), Message: "result link: is not a regular file"},
		},
		{
			name:    "result names are plain file names",
			spec:    events.TaskSpec{Script: "true"},
			results: []string{"../escape"},
			want:    Outcome{Status: StatusFailed, Message: `result name "../escape" is not a plain file name`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := newOutput()
			got := execute(t, t.Context(), &Process{}, Step{Spec: tt.spec, Results: tt.results}, out)
			assert.Equal(t, tt.want, got, "output: %s", out)
		})
	}
}

func TestSubstituteLeavesOtherReferences(t *testing.T) {
	t.Parallel()
	spec := events.TaskSpec{Script: "echo $(results.a.path) $(results.b.path) $(date)"}
	got := substitute(spec, []string{"a"}, "/w/results")
	assert.Equal(t, "echo /w/results/a $(results.b.path) $(date)", got.Script)
}

// alive reports whether pid is a process that has not ended (a zombie has).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	rest := string(b[bytes.LastIndexByte(b, ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

func requireGone(t *testing.T, pid int) {
	t.Helper()
	require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 10*time.Millisecond,
		"process %d outlived its step", pid)
}

// background starts a grandchild sleep, records its pid and waits for it.
func background(pidFile string) string {
	return fmt.Sprintf("sleep 600 &\necho $! > %s\necho started\nwait\n", pidFile)
}

func TestProcessStopKillsTheGroup(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		cancel func(context.CancelCauseFunc)
		want   Outcome
	}{
		{name: "cancelled", cancel: func(c context.CancelCauseFunc) { c(ErrCancelled) }, want: Outcome{Status: StatusCancelled, Message: "cancelled"}},
		{name: "runner stopped", cancel: func(c context.CancelCauseFunc) { c(errors.New("runner stopped")) }, want: Outcome{Status: StatusFailed, Message: "runner stopped"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pidFile := filepath.Join(t.TempDir(), "pid")
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			out := newOutput()
			done := make(chan Outcome, 1)
			go func() {
				done <- execute(t, ctx, &Process{}, Step{Spec: events.TaskSpec{Script: background(pidFile)}}, out)
			}()
			out.waitFor(t, "started")
			pid := readPID(t, pidFile)
			tt.cancel(cancel)
			assert.Equal(t, tt.want, <-done)
			requireGone(t, pid)
		})
	}
}

func TestProcessTimeoutKillsTheGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The step's deadline passes once the script is known to have started: a clock deadline
	// short enough for a quick test can pass before a loaded machine has started the shell.
	// The step sees what a passed deadline shows, the deadline and DeadlineExceeded as cause.
	deadline := time.Now().Add(time.Hour)
	withDeadline, cancelDeadline := context.WithDeadline(t.Context(), deadline)
	defer cancelDeadline()
	ctx, expire := context.WithCancelCause(withDeadline)
	defer expire(nil)
	out := newOutput()
	done := make(chan Outcome, 1)
	go func() {
		done <- execute(t, ctx, &Process{}, Step{Spec: events.TaskSpec{Script: background(pidFile)}}, out)
	}()
	out.waitFor(t, "started")
	expire(context.DeadlineExceeded)
	got := <-done
	assert.Equal(t, Outcome{Status: StatusTimedOut, Message: "timed out at " + deadline.UTC().Format(time.RFC3339)}, got)
	assert.Equal(t, "started\n", out.String())
	requireGone(t, readPID(t, pidFile))
}

func TestProcessEndsWhatItLeftRunning(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := fmt.Sprintf("sleep 600 &\necho $! > %s\necho done\n", pidFile)
	out := newOutput()
	got := execute(t, t.Context(), &Process{}, Step{Spec: events.TaskSpec{Script: script}}, out)
	assert.Equal(t, Outcome{Status: StatusSucceeded, ExitCode: code(0)}, got)
	assert.Equal(t, "done\n", out.String())
	requireGone(t, readPID(t, pidFile))
}

// The wrapper writes its files in place: a number counts only once its newline is there.
func TestReadIntWaitsForAWholeNumber(t *testing.T) {
	tests := []struct {
		content string
		want    int
		ok      bool
	}{
		{"", 0, false},
		{"12", 0, false},
		{"127\n", 127, true},
		{"0\n", 0, true},
		{"x\n", 0, false},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		path := filepath.Join(dir, "exit")
		require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
		n, ok := readInt(path)
		assert.Equal(t, tt.ok, ok, "%q", tt.content)
		assert.Equal(t, tt.want, n, "%q", tt.content)
	}
	_, ok := readInt(filepath.Join(dir, "missing"))
	assert.False(t, ok)
}

// Output reaches the follower as the step writes it, not when something looks: with
// looking put off for an hour, a step that waits for its own output to be read still
// ends.
func TestProcessOutputFollowedAsWritten(t *testing.T) {
	t.Parallel()
	p := &Process{Poll: time.Hour}
	dir := t.TempDir()
	step := Step{Dir: filepath.Join(dir, "run-1"), Spec: events.TaskSpec{Script: "echo ready\nuntil [ -e " + filepath.Join(dir, "read") + " ]; do sleep 0.01; done\necho done"}}
	out := newOutput()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan Outcome, 1)
	go func() { done <- p.Execute(ctx, step, out) }()
	out.waitFor(t, "ready\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "read"), nil, 0o600))
	o := <-done
	p.Release(step)
	assert.Equal(t, StatusSucceeded, o.Status, o.Message)
	assert.Equal(t, "ready\ndone\n", out.String())
}

// Not parallel: no other step is followed between the two, so the instance would close
// if a step's end closed it.
func TestProcessKeepsTheWatcherBetweenSteps(t *testing.T) {
	probe, err := fsnotify.NewWatcher()
	if err != nil {
		t.Skip("no inotify here")
	}
	require.NoError(t, probe.Close())
	p := &Process{Poll: time.Hour}
	watcher := func() *fsnotify.Watcher {
		stepFiles.mu.Lock()
		defer stepFiles.mu.Unlock()
		return stepFiles.w
	}
	o := execute(t, t.Context(), p, Step{Spec: events.TaskSpec{Script: "true"}}, newOutput())
	require.Equal(t, StatusSucceeded, o.Status, o.Message)
	first := watcher()
	require.NotNil(t, first, "the watcher outlives the step")
	o = execute(t, t.Context(), p, Step{Spec: events.TaskSpec{Script: "true"}}, newOutput())
	require.Equal(t, StatusSucceeded, o.Status, o.Message)
	assert.Same(t, first, watcher(), "the next step is followed with the same inotify instance")
}

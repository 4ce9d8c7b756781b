package executor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultShell runs scripts that name no shell and do not start with #!.
const DefaultShell = "/bin/sh"

// Process runs steps as local process groups, in the workspace on the runner's host.
// It ignores the spec's image.
//
// A step outlives the runner process that started it: a small shell wrapper records the
// step's process group and exit code under .baton/, and the step writes its output to a
// file there rather than to a pipe. A runner that stops (ErrDetach) leaves the step
// running; its next start follows it from the files (Resume) and reports it, so a crash
// of the runner neither kills a step half way nor runs it a second time.
type Process struct {
	// Shell runs scripts when the spec names none; empty means DefaultShell. It may carry
	// options ("/bin/bash -eu").
	Shell string
	// Env is the environment every step starts from, the spec's variables added; nil means
	// the runner's PATH and HOME.
	Env []string
	// Poll is how often a step's files are looked at where the host cannot tell of their
	// changes (no inotify); zero means 20ms. Elsewhere a step is followed as things
	// happen: its output as it is written, its end as it comes.
	Poll time.Duration
	// Logger reports what only an operator can fix; nil means slog.Default().
	Logger *slog.Logger
}

// The wrapper's files under .baton/.
const (
	outputFile = "output"
	pidFile    = "pid"
	exitFile   = "exit"
)

// wrapper runs "$@" and records, under the directory $0, its process group before and
// its exit code after. Only shell builtins: every program it started would cost a fork
// and an exec on each step. Each file is written by one write of a number and a newline;
// readInt takes a file only once it ends with the newline.
const wrapper = `echo $$ > "$0/pid" || exit 125
"$@"
code=$?
echo $code > "$0/exit"
exit $code`

// groupCheck is how often a step followed after a restart is looked for among the living,
// in case its wrapper was killed before it could record its exit (which no file tells).
const groupCheck = time.Second

// startWait bounds how long Resume waits for a step that was being started to record its
// process group.
const startWait = 2 * time.Second

// Execute implements Executor.
func (p *Process) Execute(ctx context.Context, step Step, out io.Writer) Outcome {
	ws, err := newWorkspace(step)
	if err != nil {
		return failed(err)
	}
	if step.Spec.Image != "" {
		fmt.Fprintf(out, "image %s ignored by the process executor\n", step.Spec.Image)
	}
	cmd, err := p.command(ws, step)
	if err != nil {
		ws.remove(p.Logger)
		return failed(err)
	}
	f, err := os.OpenFile(filepath.Join(ws.internal, outputFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		ws.remove(p.Logger)
		return failed(fmt.Errorf("create output file: %w", err))
	}
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Start()
	_ = f.Close()
	if err != nil {
		ws.remove(p.Logger)
		return failed(fmt.Errorf("start: %w", err))
	}
	exited := make(chan struct{})
	// Reaps the wrapper whenever it ends, whether or not this call still follows it.
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	return p.follow(ctx, ws, step, out, 0, cmd.Process.Pid, exited)
}

// Resume implements Resumer.
func (p *Process) Resume(ctx context.Context, step Step, out io.Writer, from int64) Outcome {
	ws := workspaceOf(step)
	if _, err := os.Stat(filepath.Join(ws.internal, outputFile)); err != nil {
		ws.remove(p.Logger)
		return Outcome{Status: StatusFailed, Message: "the runner stopped before the step started"}
	}
	pgid, ok, stopped := p.startedGroup(ctx, ws)
	if stopped {
		return p.stop(ctx, ws, 0, nil, nil)
	}
	if !ok {
		ws.remove(p.Logger)
		return Outcome{Status: StatusFailed, Message: "the runner stopped before the step started"}
	}
	return p.follow(ctx, ws, step, out, from, pgid, nil)
}

// startedGroup waits, up to startWait, for a step being started to record its process
// group, waking when a file of its changes; stopped is true when ctx ended first.
func (p *Process) startedGroup(ctx context.Context, ws workspace) (pgid int, ok, stopped bool) {
	changed, tick, unwatch := p.watch(ws, startWait)
	defer unwatch()
	deadline := time.NewTimer(startWait)
	defer deadline.Stop()
	for {
		if pgid, ok = readInt(filepath.Join(ws.internal, pidFile)); ok {
			return pgid, true, false
		}
		select {
		case <-ctx.Done():
			return 0, false, true
		case <-deadline.C:
			pgid, ok = readInt(filepath.Join(ws.internal, pidFile))
			return pgid, ok, false
		case <-changed:
		case <-tick:
		}
	}
}

// watch follows the files of ws: changed tells when one changed, and tick comes every
// slow for what no file tells — or every Poll where changes cannot be had (changed nil).
// stop ends both.
func (p *Process) watch(ws workspace, slow time.Duration) (changed <-chan struct{}, tick <-chan time.Time, stop func()) {
	changed, unwatch := stepFiles.watch(ws.internal)
	every := p.poll()
	if changed != nil {
		every = slow
	}
	t := time.NewTicker(every)
	return changed, t.C, func() {
		t.Stop()
		unwatch()
	}
}

// Release implements Resumer.
func (p *Process) Release(step Step) { workspaceOf(step).remove(p.Logger) }

func (p *Process) poll() time.Duration { return cmp.Or(p.Poll, 20*time.Millisecond) }

// follow copies the step's output to out until the step ends or ctx does. exited, when
// this process started the step, closes once the wrapper ended; otherwise the wrapper's
// exit file tells, and its process group is looked for every groupCheck. Output is copied
// as the step writes it (fileEvents).
func (p *Process) follow(ctx context.Context, ws workspace, step Step, out io.Writer, from int64, pgid int, exited <-chan struct{}) Outcome {
	t := &tail{path: filepath.Join(ws.internal, outputFile), offset: from, out: out}
	defer t.close()
	changed, tick, unwatch := p.watch(ws, groupCheck)
	defer unwatch()
	// The first look comes before any event: the step may have written, or ended, before
	// the watch began.
	for gone := false; ; {
		t.copy()
		if code, ok := readInt(filepath.Join(ws.internal, exitFile)); ok {
			// What the step left running in its group ends with it.
			_ = killGroup(pgid)
			t.copy()
			return ws.finish(exitedWith(code), step.Results)
		}
		if gone {
			_ = killGroup(pgid)
			return Outcome{Status: StatusFailed, Message: "the step's process was killed before it could record its exit"}
		}
		select {
		case <-ctx.Done():
			return p.stop(ctx, ws, pgid, exited, t)
		case <-exited:
			gone, exited = true, nil
		case <-changed:
		case <-tick:
			gone = exited == nil && !groupAlive(pgid)
		}
	}
}

// stop ends a step whose context ended: left running when the runner stops, else killed.
func (p *Process) stop(ctx context.Context, ws workspace, pgid int, exited <-chan struct{}, t *tail) Outcome {
	if t != nil {
		t.copy()
	}
	if errors.Is(context.Cause(ctx), ErrDetach) {
		return Outcome{Detached: true}
	}
	if pgid > 0 {
		_ = killGroup(pgid)
		if exited != nil {
			<-exited
		}
	}
	if t != nil {
		t.copy()
	}
	ws.remove(p.Logger)
	return stopped(ctx)
}

// tail copies what a growing file gains to out, keeping the file open between looks.
type tail struct {
	path   string
	offset int64
	out    io.Writer
	buf    []byte
	f      *os.File
}

func (t *tail) copy() {
	if t.f == nil {
		f, err := os.Open(t.path)
		if err != nil {
			return
		}
		t.f, t.buf = f, make([]byte, 32<<10)
	}
	for {
		n, err := t.f.ReadAt(t.buf, t.offset)
		if n > 0 {
			_, _ = t.out.Write(t.buf[:n])
			t.offset += int64(n)
		}
		if err != nil || n == 0 {
			return
		}
	}
}

func (t *tail) close() {
	if t.f != nil {
		_ = t.f.Close()
	}
}

// readInt reads a number the wrapper wrote; false when it is not there, or not whole,
// yet.
func readInt(path string) (int, bool) {
	raw, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(string(raw), "\n") {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	return n, err == nil
}

func (p *Process) command(ws workspace, step Step) (*exec.Cmd, error) {
	spec := substitute(step.Spec, step.Results, ws.results)
	var argv []string
	switch {
	case spec.Script != "":
		name, err := ws.writeScript(spec.Script)
		if err != nil {
			return nil, err
		}
		script := filepath.Join(ws.internal, name)
		if strings.HasPrefix(spec.Script, "#!") {
			argv = []string{script}
		} else {
			argv = append(strings.Fields(cmp.Or(spec.Shell, p.Shell, DefaultShell)), script)
		}
	case len(spec.Command) > 0:
		argv = append(slices.Clone(spec.Command), spec.Args...)
	default:
		return nil, errors.New("the step has neither a script nor a command")
	}
	dir, err := ws.workingDir(spec.WorkingDir, ws.dir)
	if err != nil {
		return nil, err
	}
	// Looked up here, as exec would, so a missing program is named before anything starts.
	if !strings.Contains(argv[0], "/") {
		path, err := exec.LookPath(argv[0])
		if err != nil {
			return nil, fmt.Errorf("start: %w", err)
		}
		argv[0] = path
	}
	cmd := exec.Command(DefaultShell, append([]string{"-c", wrapper, ws.internal}, argv...)...)
	cmd.Dir = dir
	cmd.Env = p.env()
	for _, e := range spec.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	setProcessGroup(cmd)
	return cmd, nil
}

func (p *Process) env() []string {
	if p.Env != nil {
		return slices.Clone(p.Env)
	}
	var env []string
	for _, k := range []string{"PATH", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

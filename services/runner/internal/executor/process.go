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
	"strings"
	"time"
)

// DefaultShell runs scripts that name no shell and do not start with #!.
const DefaultShell = "/bin/sh"

// Process runs steps as local process groups, in the workspace on the runner's host.
// It ignores the spec's image.
type Process struct {
	// Shell runs scripts when the spec names none; empty means DefaultShell. It may carry
	// options ("/bin/bash -eu").
	Shell string
	// Env is the environment every step starts from, the spec's variables added; nil means
	// the runner's PATH and HOME.
	Env []string
	// WaitDelay bounds the wait for output once the step's process has ended or was
	// killed, since children it left in the background may hold its output open; zero
	// means one second.
	WaitDelay time.Duration
	// Logger reports what only an operator can fix; nil means slog.Default().
	Logger *slog.Logger
}

// Execute implements Executor.
func (p *Process) Execute(ctx context.Context, step Step, out io.Writer) Outcome {
	ws, err := newWorkspace(step)
	if err != nil {
		return failed(err)
	}
	defer ws.remove(p.Logger)
	if step.Spec.Image != "" {
		fmt.Fprintf(out, "image %s ignored by the process executor\n", step.Spec.Image)
	}
	cmd, err := p.command(ctx, ws, step)
	if err != nil {
		return failed(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Start()
	if err == nil {
		err = cmd.Wait()
		// What the step left running in its group ends with it.
		_ = killGroup(cmd.Process.Pid)
	}
	switch {
	case ctx.Err() != nil:
		return stopped(ctx)
	case cmd.ProcessState == nil:
		return failed(fmt.Errorf("start: %w", err))
	case cmd.ProcessState.ExitCode() < 0:
		return ws.finish(Outcome{Status: StatusFailed, Message: cmd.ProcessState.String()}, step.Results)
	}
	return ws.finish(exited(cmd.ProcessState.ExitCode()), step.Results)
}

func (p *Process) command(ctx context.Context, ws workspace, step Step) (*exec.Cmd, error) {
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
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = p.env()
	for _, e := range spec.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.WaitDelay = cmp.Or(p.WaitDelay, time.Second)
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

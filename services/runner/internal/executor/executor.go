// Package executor runs one attempt's step and reports how it ended: as a local process
// group (Process), in a Docker container (Docker) or as a Kubernetes Job (Kubernetes).
// The first two lay the attempt's workspace out
// the same way — the step's working directory, results/ for its results, .baton/ for the
// runner's own files — and remove it when the attempt ends.
package executor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/events"
)

// Attempt statuses, as events.TaskUpdate carries them.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusTimedOut  = "timedout"
	StatusCancelled = "cancelled"
)

// MaxResultSize bounds one result's value; a larger one fails the attempt.
const MaxResultSize = 64 << 10

// ErrCancelled is the cause to cancel a step's context with when its run no longer wants
// it: the outcome is then cancelled rather than failed.
var ErrCancelled = errors.New("cancelled")

// ErrDetach is the cause to cancel a step's context with when the runner stops: an
// executor that can (a Resumer) leaves the step running for the runner's next start to
// take over and answers a Detached outcome; the others stop the step, which fails.
var ErrDetach = errors.New("runner stopped")

// Step is one attempt to execute.
type Step struct {
	// Dir is the attempt's workspace, an absolute path that need not exist yet; Execute
	// creates it and removes it before returning.
	Dir     string
	Spec    events.TaskSpec
	Results []string
	// TaskRunID and Attempt name the attempt, for executors that label what they start
	// with it (Kubernetes).
	TaskRunID string
	Attempt   int
}

// Outcome is how a step ended.
type Outcome struct {
	Status   string
	ExitCode *int
	Message  string
	Results  map[string]string
	// Detached marks a step left running when the runner stopped (see ErrDetach): it has
	// not ended, and its workspace is kept for Resume.
	Detached bool `json:"-"`
}

// Executor runs steps. Execute writes the step's merged stdout and stderr to out and
// returns once the step and what it started have ended. ctx ending stops the step: past
// its deadline the outcome is timedout, cancelled with cause ErrCancelled it is cancelled,
// otherwise failed with the cause as message.
type Executor interface {
	Execute(ctx context.Context, step Step, out io.Writer) Outcome
}

// Resumer is an Executor that can take over a step a previous process of the runner
// started in the same workspace (step.Dir) and left running or ended unreported. Resume
// follows it as Execute would have, sending its output from byte from on. A step that
// never started fails, and so can be retried without having run twice.
//
// Execute and Resume keep the workspace of a step that ended: it is what tells the next
// process of the runner that the step ran. Release removes it once the caller has kept
// the outcome elsewhere.
type Resumer interface {
	Executor
	Resume(ctx context.Context, step Step, out io.Writer, from int64) Outcome
	Release(step Step)
}

// workspace is an attempt's directory on the runner's host.
type workspace struct {
	dir, results, internal string
}

func workspaceOf(step Step) workspace {
	return workspace{dir: step.Dir, results: filepath.Join(step.Dir, "results"), internal: filepath.Join(step.Dir, ".baton")}
}

func newWorkspace(step Step) (workspace, error) {
	if !filepath.IsAbs(step.Dir) {
		return workspace{}, fmt.Errorf("workspace %q is not an absolute path", step.Dir)
	}
	for _, name := range step.Results {
		if !validName(name) {
			return workspace{}, fmt.Errorf("result name %q is not a plain file name", name)
		}
	}
	ws := workspaceOf(step)
	for _, d := range []string{ws.results, ws.internal} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			_ = os.RemoveAll(ws.dir)
			return workspace{}, fmt.Errorf("create workspace: %w", err)
		}
	}
	return ws, nil
}

// remove deletes the workspace and everything the step left in it.
func (ws workspace) remove(logger *slog.Logger) {
	if err := os.RemoveAll(ws.dir); err != nil {
		cmp.Or(logger, slog.Default()).Warn("remove attempt workspace", "dir", ws.dir, "err", err)
	}
}

func validName(name string) bool {
	return name != "" && filepath.IsLocal(name) && !strings.ContainsAny(name, `/\`)
}

// writeScript stores the step's script and returns its file name under .baton.
func (ws workspace) writeScript(script string) (string, error) {
	const name = "script"
	// Executable, since a script starting with #! is run directly.
	if err := os.WriteFile(filepath.Join(ws.internal, name), []byte(script), 0o755); err != nil {
		return "", fmt.Errorf("write script: %w", err)
	}
	return name, nil
}

// workingDir resolves the step's working directory, relative ones under root, which is
// where the workspace appears to the step. A relative one is created.
func (ws workspace) workingDir(wd, root string) (string, error) {
	switch {
	case wd == "":
		return root, nil
	case filepath.IsAbs(wd):
		return wd, nil
	case !filepath.IsLocal(wd):
		return "", fmt.Errorf("working directory %q leaves the workspace", wd)
	}
	if err := os.MkdirAll(filepath.Join(ws.dir, wd), 0o755); err != nil {
		return "", fmt.Errorf("create working directory: %w", err)
	}
	return filepath.Join(root, wd), nil
}

// substitute replaces every `$(results.<name>.path)` of the spec with the file the step
// writes result name to, under dir as the step sees it.
func substitute(spec events.TaskSpec, names []string, dir string) events.TaskSpec {
	if len(names) == 0 {
		return spec
	}
	pairs := make([]string, 0, 2*len(names))
	for _, n := range names {
		pairs = append(pairs, "$(results."+n+".path)", filepath.Join(dir, n))
	}
	r := strings.NewReplacer(pairs...)
	all := func(ss []string) []string {
		out := slices.Clone(ss)
		for i := range out {
			out[i] = r.Replace(out[i])
		}
		return out
	}
	spec.Script = r.Replace(spec.Script)
	spec.Command = all(spec.Command)
	spec.Args = all(spec.Args)
	spec.Env = slices.Clone(spec.Env)
	for i := range spec.Env {
		spec.Env[i].Value = r.Replace(spec.Env[i].Value)
	}
	return spec
}

// readResults reads the results the step wrote; a missing file is a result not set.
func (ws workspace) readResults(names []string) (map[string]string, error) {
	results := map[string]string{}
	for _, name := range names {
		v, ok, err := readResult(filepath.Join(ws.results, name))
		if err != nil {
			return results, fmt.Errorf("result %s: %w", name, err)
		}
		if ok {
			results[name] = v
		}
	}
	return results, nil
}

func readResult(path string) (string, bool, error) {
	// Lstat: a symlink could make the runner read a host file the step cannot.
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", false, nil
	case err != nil:
		return "", false, err
	case !fi.Mode().IsRegular():
		return "", false, errors.New("is not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	// Room for the trailing newline that is not part of the value, and one byte more.
	b, err := io.ReadAll(io.LimitReader(f, MaxResultSize+3))
	if err != nil {
		return "", false, err
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if len(v) > MaxResultSize {
		return "", false, fmt.Errorf("is larger than %d KiB", MaxResultSize>>10)
	}
	return v, true, nil
}

// finish completes an outcome with the step's results; a result that cannot be read fails
// the attempt.
func (ws workspace) finish(o Outcome, names []string) Outcome {
	results, err := ws.readResults(names)
	if len(results) > 0 {
		o.Results = results
	}
	if err != nil {
		o.Status, o.Message = StatusFailed, err.Error()
	}
	return o
}

// stopped is the outcome of a step whose context ended.
func stopped(ctx context.Context) Outcome {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, context.DeadlineExceeded):
		msg := "timed out"
		if d, ok := ctx.Deadline(); ok {
			msg = "timed out at " + d.UTC().Format(time.RFC3339)
		}
		return Outcome{Status: StatusTimedOut, Message: msg}
	case errors.Is(cause, ErrCancelled):
		return Outcome{Status: StatusCancelled, Message: "cancelled"}
	default:
		return Outcome{Status: StatusFailed, Message: cause.Error()}
	}
}

// exitedWith is the outcome of a step that ended with code.
func exitedWith(code int) Outcome {
	if code == 0 {
		return Outcome{Status: StatusSucceeded, ExitCode: &code}
	}
	return Outcome{Status: StatusFailed, ExitCode: &code, Message: fmt.Sprintf("exit code %d", code)}
}

func failed(err error) Outcome {
	return Outcome{Status: StatusFailed, Message: err.Error()}
}

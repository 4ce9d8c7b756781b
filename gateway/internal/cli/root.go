// Package cli is the baton command: `baton server` runs Baton in one process, and the other
// commands call a Baton server through the Go SDK with the credentials of a named context
// (see package config). Read commands take -o table|wide|json|yaml (package printer); run
// submit --watch and run watch draw the run live (package watch) and exit with the run's
// outcome.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-flow/baton/gateway/internal/cli/config"
	"github.com/baton-flow/baton/gateway/internal/cli/watch"
	"github.com/baton-flow/baton/libs/client"
)

// Env is what the command runs with: the process's environment and streams, and how it
// reaches a server.
type Env struct {
	Getenv func(string) string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Connect returns a client of the server a context names; nil is the SDK's (Connect).
	Connect func(config.Context) (*client.Client, error)
	// Source, when set, gives the live view its run states instead of the server.
	Source func(*client.Client) watch.Source
	// Terminal reports whether w is a terminal and, if so, how to read its width and
	// height.
	Terminal func(w io.Writer) (bool, func() (width, height int))
}

// exitError ends the command with a code of its own, after printing nothing more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Main runs the command line args and returns the process's exit code: 0 on success, 1 on
// an error (printed to Stderr as "baton: …"), and for a watched run its outcome (see
// watch.ExitCode).
func Main(ctx context.Context, args []string, env Env) int {
	root := NewRoot(&env)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var exit exitError
	if errors.As(err, &exit) {
		return exit.code
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "baton: ") { // the SDK's errors say it already
		msg = "baton: " + msg
	}
	fmt.Fprintln(env.Stderr, msg)
	return watch.ExitError
}

// NewRoot returns the baton command with every subcommand.
func NewRoot(env *Env) *cobra.Command {
	if env.Terminal == nil {
		env.Terminal = terminal
	}
	if env.Connect == nil {
		env.Connect = Connect
	}
	if env.Source == nil {
		env.Source = func(c *client.Client) watch.Source { return &runSource{c: c} }
	}
	root := &cobra.Command{
		Use:   "baton",
		Short: "Run and watch Baton workflows",
		Long: `baton runs a Baton server on this machine (baton server) and calls a Baton server:
it submits runs and watches them, and reads and deletes workflows, runs, schedules, tasks,
templates, teams and tokens.

Log in once with baton login; the server and token are kept in a named context.
BATON_SERVER and BATON_TOKEN override the context's, for scripts and CI.`,
		Example: `  baton server
  baton login --server http://127.0.0.1:8080 --token $TOKEN
  baton run submit infra/deploy -p env=prod --watch`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.PersistentFlags().String("context", "", "the context to use instead of the current one (see baton context list)")
	root.PersistentFlags().String("team", "", "the team to work in instead of the context's (BATON_TEAM)")
	root.AddCommand(newServerCmd(env), newLoginCmd(env), newContextCmd(env),
		newApplyCmd(env), newGetCmd(env), newDescribeCmd(env), newDeleteCmd(env), newRunCmd(env), newActionCmd(env),
		newScheduleCmd(env), newTokenCmd(env), newTeamCmd(env),
		newCompletionCmd(root))
	return root
}

// session is a command's resolved context and a client of its server.
type session struct {
	ctx    config.Context
	client *client.Client
	// envToken: the token is BATON_TOKEN's, not the context's.
	envToken bool
}

// connect resolves the context of cmd's --context flag and connects to its server.
func connect(cmd *cobra.Command, env *Env) (*session, error) {
	named, _ := cmd.Flags().GetString("context")
	path, err := config.Path(env.Getenv)
	if err != nil {
		return nil, err
	}
	f, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	c, err := f.Resolve(named, env.Getenv)
	if err != nil {
		return nil, err
	}
	if c.Token == "" {
		return nil, fmt.Errorf("no token for %s: run `baton login --server %s --token TOKEN`, or set %s", c.Server, c.Server, config.EnvToken)
	}
	if team, _ := cmd.Flags().GetString("team"); team != "" {
		c.Team = team
	}
	cl, err := env.Connect(c)
	if err != nil {
		return nil, err
	}
	return &session{ctx: c, client: cl, envToken: env.Getenv(config.EnvToken) != ""}, nil
}

// connectIn connects as connect does and splits arg, NAME or TEAM/NAME, as inTeam does.
func connectIn(cmd *cobra.Command, env *Env, arg string) (s *session, team, name string, err error) {
	if s, err = connect(cmd, env); err != nil {
		return nil, "", "", err
	}
	team, name, err = s.inTeam(arg)
	return s, team, name, err
}

// inTeam splits a TEAM/NAME argument, or names NAME in the session's team.
func (s *session) inTeam(arg string) (team, name string, err error) {
	if t, n, ok := strings.Cut(arg, "/"); ok {
		if t == "" || n == "" {
			return "", "", fmt.Errorf("%q is neither NAME nor TEAM/NAME", arg)
		}
		return t, n, nil
	}
	if s.ctx.Team == "" {
		return "", "", fmt.Errorf("no team for %q: write TEAM/%s, give --team, or log in with --team", arg, arg)
	}
	return s.ctx.Team, arg, nil
}

// terminal reports whether w is a terminal and its width.
func terminal(w io.Writer) (bool, func() (int, int)) {
	f, ok := w.(*os.File)
	if !ok {
		return false, nil
	}
	return isTerminal(f)
}

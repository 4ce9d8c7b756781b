package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-flow/baton/gateway/internal/cli/watch"
)

// newRunCmd is `baton run`: runs of workflows.
func newRunCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "run",
		Aliases: []string{"runs"},
		Short:   "Submit, watch and manage workflow runs",
		Example: `  baton run watch 01936b7c-...`,
	}
	cmd.AddCommand(newRunWatchCmd(env))
	return cmd
}

func newRunWatchCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "watch RUN",
		Short: "Show a run live until it ends; the exit code is its outcome",
		Long: `Draws the run's tasks in the order of its DAG, each with its status and time, what
each waiting task waits for (an approval's approvers, a manual form, an event's topic, a
lock, a sleep's end), and the run's status and elapsed time, until the run ends. On a
terminal the view is redrawn in place; otherwise each change is one line.

Exit code: 0 succeeded, 3 failed, 4 cancelled, 5 timed out, 1 when the run could not be
watched. RUN is a run id in the context's team, or TEAM/RUN.`,
		Example: `  baton run watch 01936b7c-5d1e-7a4b-9c3e-2f1a0b9c8d7e
  baton run watch infra/01936b7c-5d1e-7a4b-9c3e-2f1a0b9c8d7e || echo "the run did not succeed"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := connect(cmd, env)
			if err != nil {
				return err
			}
			team, id, err := s.inTeam(args[0])
			if err != nil {
				return err
			}
			return followRun(cmd, env, s, team, id)
		},
	}
}

// followRun draws a run live until it ends and ends the command with its outcome.
func followRun(cmd *cobra.Command, env *Env, s *session, team, id string) error {
	out := cmd.OutOrStdout()
	tty, width := env.Terminal(out)
	v := &watch.View{Out: out, TTY: tty, Color: tty && env.Getenv("NO_COLOR") == "", Width: width, Now: time.Now}
	last, err := watch.Follow(cmd.Context(), env.Source(s.client), team, id, v)
	if err != nil {
		return unauthorizedHint(s, err)
	}
	if code := watch.ExitCode(last.Status); code != watch.ExitSucceeded {
		return exitError{code: code}
	}
	return nil
}

package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-flow/baton/gateway/internal/cli/printer"
	"github.com/baton-flow/baton/gateway/internal/cli/watch"
	"github.com/baton-flow/baton/libs/client"
)

// newRunCmd is `baton run`: runs of workflows.
func newRunCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "run",
		Aliases: []string{"runs"},
		Short:   "Submit, watch, list, cancel and retry workflow runs, and read their logs",
		Example: `  baton run submit deploy -p env=prod --watch
  baton run list --status failed
  baton run logs 01936b7c-5d1e-7a4b-9c3e-2f1a0b9c8d7e build -f`,
	}
	cmd.AddCommand(newRunSubmitCmd(env), newRunWatchCmd(env), newRunListCmd(env), newRunCancelCmd(env),
		newRunRetryCmd(env), newRunLogsCmd(env))
	return cmd
}

// keyValues reads key=value flags into a map.
func keyValues(flag string, items []string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(items))
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--%s %q: want key=value", flag, it)
		}
		out[k] = v
	}
	return out, nil
}

func newRunSubmitCmd(env *Env) *cobra.Command {
	var params, labels []string
	var watchIt, start bool
	var version int64
	var key, output string
	cmd := &cobra.Command{
		Use:   "submit WORKFLOW",
		Short: "Submit a run of a workflow, and with --watch show it live until it ends",
		Long: `Submits a run of WORKFLOW (NAME in the context's team, or TEAM/NAME) with the params
given by -p key=value (repeatable), and prints its id. With --watch it then shows the run
live as baton run watch does, and the exit code is the run's outcome: 0 succeeded, 3
failed, 4 cancelled, 5 timed out. An --idempotency-key submits once however often the
command is repeated within 24 hours (the first run is answered again).`,
		Example: `  baton run submit deploy -p env=prod -p version=1.4.2 --watch
  baton run submit infra/nightly --label origin=cron --idempotency-key nightly-2026-12-07
  baton run submit deploy -o json | jq -r .id`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: namesOf(env, "workflow"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.ParseFormat(output)
			if err != nil {
				return err
			}
			p, err := keyValues("param", params)
			if err != nil {
				return err
			}
			l, err := keyValues("label", labels)
			if err != nil {
				return err
			}
			s, team, workflow, err := connectIn(cmd, env, args[0])
			if err != nil {
				return err
			}
			req := &client.WorkflowSubmitRequest{Labels: l, WorkflowVersion: version, IdempotencyKey: key}
			if p != nil {
				req.Params = p
			}
			run, err := s.client.SubmitWorkflow(cmd.Context(), team, workflow, req, start || watchIt)
			if err != nil {
				return s.hint(err)
			}
			out := cmd.OutOrStdout()
			if watchIt {
				return followRun(cmd, env, s, team, run.ID)
			}
			if format == printer.JSON || format == printer.YAML {
				return printer.Object(out, printer.New(format), run, nil)
			}
			fmt.Fprintf(out, "Run %s of %s/%s v%d submitted: %s.\nWatch it with: baton run watch %s/%s\n",
				run.ID, team, workflow, run.WorkflowVersion, run.Status, team, run.ID)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&params, "param", "p", nil, "a param of the run, key=value (repeatable)")
	f.StringArrayVar(&labels, "label", nil, "a label of the run, key=value (repeatable)")
	f.BoolVarP(&watchIt, "watch", "w", false, "show the run live until it ends; exit with its outcome")
	f.BoolVar(&start, "start", false, "start the run within the request when a slot is free (implied by --watch)")
	f.Int64Var(&version, "version", 0, "run this version of the workflow instead of the latest")
	f.StringVar(&key, "idempotency-key", "", "submit once for this key (kept 24 hours)")
	f.StringVarP(&output, "output", "o", "", "json or yaml: print the submitted run")
	return cmd
}

func newRunWatchCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "watch RUN",
		Short: "Show a run live until it ends; the exit code is its outcome",
		Long: `Draws the run's tasks in the order of its DAG, each with its status and time, what
each waiting task waits for (an approval's approvers, a manual form, an event's topic, a
lock, a sleep's end), and the run's status and elapsed time, until the run ends. On a
terminal the view is redrawn in place and coloured (unless NO_COLOR is set); otherwise
each change is one line.

Exit code: 0 succeeded, 3 failed, 4 cancelled, 5 timed out, 1 when the run could not be
watched. RUN is a run id in the context's team, or TEAM/RUN.`,
		Example: `  baton run watch 01936b7c-5d1e-7a4b-9c3e-2f1a0b9c8d7e
  baton run watch infra/01936b7c-5d1e-7a4b-9c3e-2f1a0b9c8d7e || echo "the run did not succeed"`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: namesOf(env, "run"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, team, id, err := connectIn(cmd, env, args[0])
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
	tty, size := env.Terminal(out)
	v := &watch.View{Out: out, TTY: tty, Color: tty && env.Getenv("NO_COLOR") == "", Resize: size, Now: time.Now}
	last, err := watch.Follow(cmd.Context(), env.Source(s.client), team, id, v)
	if err != nil && cmd.Context().Err() != nil {
		return fmt.Errorf("stopped watching run %s, which goes on: baton run watch %s/%s follows it again", id, team, id)
	}
	if err != nil {
		return s.hint(err)
	}
	if code := watch.ExitCode(last.Status); code != watch.ExitSucceeded {
		return exitError{code: code}
	}
	return nil
}

func newRunListCmd(env *Env) *cobra.Command {
	var output string
	var statuses, triggers []string
	var limit int
	cmd := &cobra.Command{
		Use:     "list [WORKFLOW]",
		Aliases: []string{"ls"},
		Short:   "List the team's runs, newest first",
		Example: `  baton run list
  baton run list deploy --status failed,timedout -o wide
  baton run list --trigger schedule --limit 20 -o json`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: namesOf(env, "workflow"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.ParseFormat(output)
			if err != nil {
				return err
			}
			s, err := connect(cmd, env)
			if err != nil {
				return err
			}
			team := s.ctx.Team
			q := client.RunQuery{Order: "DESC", Statuses: statuses, Triggers: triggers, Limit: pageSize(limit)}
			if len(args) == 1 {
				var wf string
				if team, wf, err = s.inTeam(args[0]); err != nil {
					return err
				}
				q.Workflows = []string{wf}
			}
			if team == "" {
				return fmt.Errorf("runs are in a team: give --team, or log in with --team")
			}
			rows := []client.WorkflowRun{}
			for r, err := range s.client.WorkflowRuns(cmd.Context(), team, q) {
				if err != nil {
					return s.hint(err)
				}
				rows = append(rows, r)
				if limit > 0 && len(rows) >= limit {
					break
				}
			}
			return printer.Print(cmd.OutOrStdout(), printer.New(format), rows, rows, runCols)
		},
	}
	addOutputFlag(cmd, &output)
	cmd.Flags().StringSliceVar(&statuses, "status", nil, "only runs of these statuses (succeeded, failed, running, waiting, …)")
	cmd.Flags().StringSliceVar(&triggers, "trigger", nil, "only runs of these triggers (manual, schedule, webhook, event, …)")
	cmd.Flags().IntVar(&limit, "limit", 50, "list at most this many (0: all)")
	return cmd
}

// runMove is a command that moves a run (cancel, retry) and prints the run it answers.
func runMove(env *Env, use, short, example string, move func(ctx context.Context, s *session, team, id string) (*client.WorkflowRun, string, error)) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use: use, Short: short, Example: example,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: namesOf(env, "run"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.ParseFormat(output)
			if err != nil {
				return err
			}
			s, team, id, err := connectIn(cmd, env, args[0])
			if err != nil {
				return err
			}
			run, said, err := move(cmd.Context(), s, team, id)
			if err != nil {
				return s.hint(err)
			}
			if format == printer.JSON || format == printer.YAML {
				return printer.Object(cmd.OutOrStdout(), printer.New(format), run, nil)
			}
			fmt.Fprintln(cmd.OutOrStdout(), said)
			return nil
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func newRunCancelCmd(env *Env) *cobra.Command {
	return runMove(env, "cancel RUN", "Cancel a run not yet ended: running tasks are stopped, pending ones skipped",
		"  baton run cancel 01936b7c-5d1e-7a4b-9c3e-2f1a0b9c8d7e",
		func(ctx context.Context, s *session, team, id string) (*client.WorkflowRun, string, error) {
			run, err := s.client.CancelWorkflowRun(ctx, team, id)
			if err != nil {
				return nil, "", err
			}
			return run, fmt.Sprintf("Run %s %s.", run.ID, run.Status), nil
		})
}

func newRunRetryCmd(env *Env) *cobra.Command {
	var fromFailure, watchIt bool
	retry := func(ctx context.Context, s *session, team, id string) (*client.WorkflowRun, string, error) {
		run, err := s.client.RetryWorkflowRun(ctx, team, id, &client.WorkflowRunRequest{FromFailure: client.Bool(fromFailure)})
		if err != nil {
			return nil, "", err
		}
		return run, fmt.Sprintf("Run %s retries %s: %s.\nWatch it with: baton run watch %s/%s", run.ID, id, run.Status, team, run.ID), nil
	}
	cmd := runMove(env, "retry RUN", "Run an ended run that did not succeed again, as a new run",
		"  baton run retry 01936b7c-5d1e-7a4b-9c3e-2f1a0b9c8d7e --from-failure --watch", retry)
	cmd.Long = `Runs an ended run that did not succeed again, as a new run of the same workflow version.
With --from-failure the tasks that succeeded keep their results and do not run again;
without it every task runs again. With --watch the new run is shown live and the exit
code is its outcome.`
	printIt := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if !watchIt {
			return printIt(c, args)
		}
		s, team, id, err := connectIn(c, env, args[0])
		if err != nil {
			return err
		}
		run, _, err := retry(c.Context(), s, team, id)
		if err != nil {
			return s.hint(err)
		}
		return followRun(c, env, s, team, run.ID)
	}
	cmd.Flags().BoolVar(&fromFailure, "from-failure", false, "keep the succeeded tasks' results and run only the rest")
	cmd.Flags().BoolVarP(&watchIt, "watch", "w", false, "show the new run live; exit with its outcome")
	return cmd
}

// maxPage is the largest page the API answers.
const maxPage = 1000

// pageSize is the page to read a list of at most limit (0: every one) in.
func pageSize(limit int) int {
	if limit <= 0 {
		return maxPage
	}
	return min(limit, maxPage)
}

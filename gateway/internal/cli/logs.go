package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/baton-flow/baton/libs/client"
)

func newRunLogsCmd(env *Env) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs RUN [TASK]",
		Short: "Print a run's task logs; -f follows them until the tasks end",
		Long: `Prints the log of the run's task TASK, or of each of its tasks in turn, each line of
those prefixed by its task's name. With -f each log is followed until its task ends (the
tasks in turn: a later task's lines come once the one before it has ended). Secrets read
******** in every log.`,
		Example: `  baton run logs 01936b7c-5d1e-7a4b-9c3e-2f1a0b9c8d7e
  baton run logs infra/01936b7c-5d1e-7a4b-9c3e-2f1a0b9c8d7e build -f`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: namesOf(env, "run"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, team, id, err := connectIn(cmd, env, args[0])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			run, err := s.client.GetWorkflowRun(ctx, team, id)
			if err != nil {
				return s.hint(err)
			}
			out := cmd.OutOrStdout()
			if len(args) == 2 {
				t, ok := run.Task(args[1])
				if !ok {
					return fmt.Errorf("run %s has no task %q (baton describe run %s/%s lists them)", id, args[1], team, id)
				}
				return s.hint(printLog(cmd, s.client, t.ID, "", follow, out))
			}
			for _, t := range run.Tasks {
				if t.Type == "start" || t.Type == "end" {
					continue
				}
				if err := printLog(cmd, s.client, t.ID, t.Name, follow, out); err != nil {
					return s.hint(err)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow the log until the task ends")
	return cmd
}

// printLog writes a task run's log, each line prefixed by prefix when there is one.
func printLog(cmd *cobra.Command, c *client.Client, taskRunID, prefix string, follow bool, out io.Writer) error {
	if prefix != "" {
		prefix = "[" + prefix + "] "
	}
	for line, err := range c.TaskRunLogLines(cmd.Context(), taskRunID, follow) {
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintln(out, prefix+line); err != nil {
			return err
		}
	}
	return nil
}

package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-flow/baton/gateway/internal/cli/printer"
	"github.com/baton-flow/baton/libs/client"
)

// newActionCmd is `baton action`: the approvals and manual forms runs wait on.
func newActionCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "action",
		Aliases: []string{"actions"},
		Short:   "List, approve, reject and complete the actions runs wait on",
		Long: `Approval and manual tasks wait on an action: an approval is approved or rejected, a
manual form is completed with its fields' values. Only users act on actions: log in with a
user's token.`,
		Example: `  baton action list
  baton action approve 0193a1b2c3 -m "looks good"
  baton action complete 0193a1b2c4 --set ticket=CHG-1234`,
	}
	cmd.AddCommand(newActionListCmd(env),
		newDecideCmd(env, "approve", "Approve an approval (one vote of those it needs)", true),
		newDecideCmd(env, "reject", "Reject an approval: its task fails at once", false),
		newCompleteCmd(env))
	return cmd
}

var actionCols = []printer.Column[client.Action]{
	col("ID", func(a client.Action) string { return a.ID }),
	col("TYPE", func(a client.Action) string { return a.Type }),
	col("STATUS", func(a client.Action) string { return a.Status }),
	col("WORKFLOW", func(a client.Action) string { return a.WorkflowRef }),
	col("TASK", func(a client.Action) string { return a.TaskName }),
	col("APPROVALS", func(a client.Action) string {
		if a.Type != "approval" {
			return ""
		}
		return fmt.Sprintf("%d/%d", a.NumberOfApprovals, max(a.NumberOfApprovers, 1))
	}),
	wideCol("RUN", func(a client.Action) string { return a.WorkflowRunRef }),
	wideCol("INSTRUCTIONS", func(a client.Action) string { return firstLines(a.Instructions, 1) }),
	timeCol("CREATED", func(a client.Action) time.Time { return a.CreationDate }),
}

func newActionListCmd(env *Env) *cobra.Command {
	var output string
	var statuses, types []string
	var all bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the team's actions: those waiting for an answer unless --all",
		Example: `  baton action list
  baton action list --all --type approval -o wide`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := printer.ParseFormat(output)
			if err != nil {
				return err
			}
			s, err := connect(cmd, env)
			if err != nil {
				return err
			}
			if s.ctx.Team == "" {
				return fmt.Errorf("actions are in a team: give --team, or log in with --team")
			}
			if !all && len(statuses) == 0 {
				statuses = []string{"submitted"}
			}
			rows := []client.Action{}
			for a, err := range s.client.Actions(cmd.Context(), s.ctx.Team, client.ActionQuery{Statuses: statuses, Types: types, Limit: 1000}) {
				if err != nil {
					return s.hint(err)
				}
				rows = append(rows, a)
			}
			return printer.Print(cmd.OutOrStdout(), printer.New(format), rows, rows, actionCols)
		},
	}
	addOutputFlag(cmd, &output)
	cmd.Flags().BoolVar(&all, "all", false, "list actions of every status, not only those waiting")
	cmd.Flags().StringSliceVar(&statuses, "status", nil, "only actions of these statuses (submitted, approved, rejected, completed, cancelled)")
	cmd.Flags().StringSliceVar(&types, "type", nil, "only actions of these types (approval, manual)")
	return cmd
}

// openActions completes the ids of the team's actions waiting for an answer.
func openActions(env *Env) completeFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		s, err := connect(cmd, env)
		if err != nil || s.ctx.Team == "" {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var ids []string
		for a, err := range s.client.Actions(cmd.Context(), s.ctx.Team, client.ActionQuery{Statuses: []string{"submitted"}, Limit: 200}) {
			if err != nil {
				break
			}
			ids = append(ids, a.ID+"\t"+a.WorkflowRef+" "+a.TaskName)
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	}
}

func newDecideCmd(env *Env, verb, short string, approve bool) *cobra.Command {
	var comment string
	cmd := &cobra.Command{
		Use:               verb + " ACTION",
		Short:             short,
		Example:           fmt.Sprintf("  baton action %s 0193a1b2c3 -m \"%s\"", verb, map[bool]string{true: "looks good", false: "not this week"}[approve]),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: openActions(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, team, id, err := connectIn(cmd, env, args[0])
			if err != nil {
				return err
			}
			decide := s.client.Reject
			if approve {
				decide = s.client.Approve
			}
			if err := decide(cmd.Context(), team, id, comment); err != nil {
				return s.hint(err)
			}
			return sayAction(cmd.Context(), cmd, s, team, id)
		},
	}
	cmd.Flags().StringVarP(&comment, "message", "m", "", "a comment kept with the decision")
	return cmd
}

func newCompleteCmd(env *Env) *cobra.Command {
	var sets []string
	cmd := &cobra.Command{
		Use:               "complete ACTION --set FIELD=VALUE ...",
		Short:             "Complete a manual form with its fields' values, which become its task's results",
		Example:           `  baton action complete 0193a1b2c4 --set ticket=CHG-1234 --set window=22:00`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: openActions(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			fields, err := keyValues("set", sets)
			if err != nil {
				return err
			}
			s, team, id, err := connectIn(cmd, env, args[0])
			if err != nil {
				return err
			}
			values := make(map[string]any, len(fields))
			for k, v := range fields {
				values[k] = v
			}
			if err := s.client.CompleteManualAction(cmd.Context(), team, id, values); err != nil {
				return s.hint(err)
			}
			return sayAction(cmd.Context(), cmd, s, team, id)
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "a field of the form, FIELD=VALUE (repeatable)")
	return cmd
}

// sayAction prints what an action is now.
func sayAction(ctx context.Context, cmd *cobra.Command, s *session, team, id string) error {
	a, err := s.client.GetAction(ctx, team, id)
	if err != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "Action %s answered.\n", id)
		return nil
	}
	say := a.Status
	if a.Type == "approval" && a.Status == "submitted" {
		say = fmt.Sprintf("still waiting: %d of %d approvals", a.NumberOfApprovals, max(a.NumberOfApprovers, 1))
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Action %s (%s of %s, task %s): %s.\n", a.ID, a.Type, a.WorkflowRef, a.TaskName, strings.TrimSpace(say))
	return nil
}

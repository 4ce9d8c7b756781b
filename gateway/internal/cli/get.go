package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-flow/baton/gateway/internal/cli/printer"
)

const kindsHelp = "workflows, runs, schedules, tasks, templates, teams, tokens"

// newGetCmd is `baton get KIND [NAME]`: a table of a kind's resources, or one of them.
func newGetCmd(env *Env) *cobra.Command {
	var output string
	var limit int
	cmd := &cobra.Command{
		Use:   "get KIND [NAME]",
		Short: "List resources of a kind, or show one (" + kindsHelp + ")",
		Long: `Lists the resources of a kind as a table, or the one named. Workflows, runs and
schedules are in a team: the context's, --team, or TEAM/NAME. Tasks lists the global
catalogue, then the team's tasks when a team is known. -o json and -o yaml print the API's
objects as they are.`,
		Example: `  baton get workflows
  baton get runs --team infra -o wide
  baton get workflow infra/deploy -o yaml
  baton get tokens -o json`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: kindAndName(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, s, p, err := readKind(cmd, env, output, args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(args) == 1 {
				team, err := s.listTeam(k)
				if err != nil {
					return err
				}
				return s.hint(k.list(cmd.Context(), s, team, limit, p, out))
			}
			team, name, err := s.nameIn(k, args[1])
			if err != nil {
				return err
			}
			return s.hint(k.get(cmd.Context(), s, team, name, p, out))
		},
	}
	addOutputFlag(cmd, &output)
	cmd.Flags().IntVar(&limit, "limit", 500, "list at most this many (0: all)")
	return cmd
}

// newDescribeCmd is `baton describe KIND NAME`: one resource in detail.
func newDescribeCmd(env *Env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "describe KIND NAME",
		Short: "Show one resource in detail (" + kindsHelp + ")",
		Example: `  baton describe workflow deploy
  baton describe run infra/01936b7c-5d1e-7a4b-9c3e-2f1a0b9c8d7e
  baton describe team infra -o json`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: kindAndName(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, s, p, err := readKind(cmd, env, output, args[0])
			if err != nil {
				return err
			}
			team, name, err := s.nameIn(k, args[1])
			if err != nil {
				return err
			}
			return s.hint(k.describe(cmd.Context(), s, team, name, p, cmd.OutOrStdout()))
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// newDeleteCmd is `baton delete KIND NAME`.
func newDeleteCmd(env *Env) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "delete KIND NAME",
		Short: "Delete a resource (workflows, schedules, team tasks, templates, teams; tokens are revoked)",
		Long: `Deletes a workflow, schedule, team task, template or team, or revokes a token.
A workflow or team with runs not yet ended is refused unless --force, which cancels them
first. Runs are history and are not deleted: baton run cancel stops one.`,
		Example: `  baton delete workflow deploy
  baton delete team sandbox --force
  baton delete token 6f1c9e`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: kindAndName(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := findKind(args[0])
			if err != nil {
				return err
			}
			s, err := connect(cmd, env)
			if err != nil {
				return err
			}
			team, name, err := s.nameIn(k, args[1])
			if err != nil {
				return err
			}
			if err := s.hint(k.del(cmd.Context(), s, team, name, force)); err != nil {
				return err
			}
			verb := "deleted"
			if k.name == "token" {
				verb = "revoked"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %q %s\n", strings.ToUpper(k.name[:1])+k.name[1:], name, verb)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "cancel the runs not yet ended of a workflow or team first")
	return cmd
}

// readKind reads what a read command of a kind needs: its printer, the kind named by word,
// and a session.
func readKind(cmd *cobra.Command, env *Env, output, word string) (kind, *session, *printer.Printer, error) {
	format, err := printer.ParseFormat(output)
	if err != nil {
		return kind{}, nil, nil, err
	}
	k, err := findKind(word)
	if err != nil {
		return kind{}, nil, nil, err
	}
	s, err := connect(cmd, env)
	if err != nil {
		return kind{}, nil, nil, err
	}
	return k, s, printer.New(format), nil
}

// listTeam is the team a list of k is in: none for global kinds, the session's for team
// kinds (tasks take it when there is one).
func (s *session) listTeam(k kind) (string, error) {
	if k.team && s.ctx.Team == "" {
		return "", fmt.Errorf("%ss are in a team: give --team, or log in with --team", k.name)
	}
	return s.ctx.Team, nil
}

// nameIn splits NAME or TEAM/NAME for a kind in a team; a global kind's name is whole.
func (s *session) nameIn(k kind, arg string) (team, name string, err error) {
	if k.team {
		return s.inTeam(arg)
	}
	if k.name == "task" {
		if t, n, ok := strings.Cut(arg, "/"); ok {
			return t, n, nil
		}
	}
	return s.ctx.Team, arg, nil
}

// hint adds to an error what to do about it: a refused token says how to log in again.
func (s *session) hint(err error) error {
	if err == nil {
		return nil
	}
	return unauthorizedHint(s, err)
}

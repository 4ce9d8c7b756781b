package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-flow/baton/gateway/internal/cli/printer"
	"github.com/baton-flow/baton/libs/client"
)

// newTeamCmd is `baton team`: teams, their members and approver groups.
func newTeamCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "team",
		Aliases: []string{"teams"},
		Short:   "Create teams and manage their members and approver groups",
		Long: `A team holds workflows, runs and schedules; its members hold a role in it: owner (all),
editor (read, write, act on actions) or reader (read). Members, roles and approver groups
change only by a team owner logged in as a user, or by an admin: a team or workflow token
cannot change them. baton get teams lists the teams you see.`,
		Example: `  baton team create payments --member ana@example.com=owner --member bo@example.com=editor
  baton team members payments
  baton team set-approvers payments leads ana@example.com bo@example.com`,
	}
	cmd.AddCommand(newTeamCreateCmd(env), newTeamMembersCmd(env), newTeamAddMemberCmd(env), newTeamRemoveMemberCmd(env),
		newTeamApproversCmd(env), newTeamSetApproversCmd(env))
	return cmd
}

// memberFlags reads --member EMAIL=ROLE flags.
func memberFlags(items []string) ([]client.TeamMemberRequest, error) {
	var out []client.TeamMemberRequest
	for _, it := range items {
		email, role, ok := strings.Cut(it, "=")
		if !ok || email == "" || role == "" {
			return nil, fmt.Errorf("--member %q: want EMAIL=ROLE (owner, editor or reader)", it)
		}
		out = append(out, client.TeamMemberRequest{Email: email, Role: role})
	}
	return out, nil
}

func newTeamCreateCmd(env *Env) *cobra.Command {
	var members []string
	var displayName, output string
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a team; you become its owner, with the members given",
		Long: `Creates the team NAME (a slug: lower-case letters, digits and dashes). A user who creates
it becomes its owner; --member EMAIL=ROLE (repeatable) adds others as owner, editor or
reader, an unknown email as a pending user who joins at first login.`,
		Example: `  baton team create payments
  baton team create payments --display-name Payments --member ana@example.com=owner --member bo@example.com=editor`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.ParseFormat(output)
			if err != nil {
				return err
			}
			m, err := memberFlags(members)
			if err != nil {
				return err
			}
			s, err := connect(cmd, env)
			if err != nil {
				return err
			}
			t, err := s.client.CreateTeam(cmd.Context(), &client.TeamRequest{Name: args[0], DisplayName: displayName, Members: m})
			if err != nil {
				return s.teamHint(cmd.Context(), err, args[0], false)
			}
			if format == printer.JSON || format == printer.YAML {
				return printer.Object(cmd.OutOrStdout(), printer.New(format), t, nil)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Team %s created with %s.\n", t.Name, memberList(t.Members))
			return nil
		},
	}
	addOutputFlag(cmd, &output)
	cmd.Flags().StringArrayVar(&members, "member", nil, "a member, EMAIL=ROLE (repeatable)")
	cmd.Flags().StringVar(&displayName, "display-name", "", "the team's name as people read it")
	return cmd
}

// memberList says who a team's members are: "ana@example.com (owner), bo@example.com (editor)".
func memberList(ms []client.TeamMember) string {
	if len(ms) == 0 {
		return "no members"
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = person(m.Email, m.Name, m.ID) + " (" + m.Role + ")"
	}
	return strings.Join(out, ", ")
}

var memberCols = []printer.Column[client.TeamMember]{
	col("EMAIL", func(m client.TeamMember) string { return m.Email }),
	col("NAME", func(m client.TeamMember) string { return m.Name }),
	col("ROLE", func(m client.TeamMember) string { return m.Role }),
	wideCol("ID", func(m client.TeamMember) string { return m.ID }),
}

// teamArg is the team a command names: its argument, else the session's team.
func (s *session) teamArg(args []string) (string, error) {
	if len(args) > 0 && args[0] != "" {
		return args[0], nil
	}
	if s.ctx.Team == "" {
		return "", fmt.Errorf("name the team: baton team … TEAM, or log in with --team")
	}
	return s.ctx.Team, nil
}

func newTeamMembersCmd(env *Env) *cobra.Command {
	return teamListCmd(env, &cobra.Command{
		Use:     "members [TEAM]",
		Short:   "List a team's members and their roles",
		Example: "  baton team members payments\n  baton team members -o wide",
	}, func(t *client.Team) []client.TeamMember { return t.Members }, memberCols)
}

// teamListCmd completes cmd as a table of what pick reads of the team named (the
// context's when none is).
func teamListCmd[T any](env *Env, cmd *cobra.Command, pick func(*client.Team) []T, cols []printer.Column[T]) *cobra.Command {
	var output string
	cmd.Args = cobra.MaximumNArgs(1)
	cmd.ValidArgsFunction = namesOf(env, "team")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		format, err := printer.ParseFormat(output)
		if err != nil {
			return err
		}
		s, err := connect(cmd, env)
		if err != nil {
			return err
		}
		team, err := s.teamArg(args)
		if err != nil {
			return err
		}
		t, err := s.client.GetTeam(cmd.Context(), team)
		if err != nil {
			return s.teamHint(cmd.Context(), err, team, false)
		}
		rows := pick(t)
		if rows == nil {
			rows = []T{}
		}
		return printer.Print(cmd.OutOrStdout(), printer.New(format), rows, rows, cols)
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func newTeamAddMemberCmd(env *Env) *cobra.Command {
	var role string
	cmd := &cobra.Command{
		Use:   "add-member TEAM EMAIL --role owner|editor|reader",
		Short: "Add a member to a team, or change a member's role",
		Long: `Adds the user with EMAIL to TEAM in --role, or gives a member that role. An email no
user has yet makes a pending user, who joins at first login.`,
		Example:           "  baton team add-member payments bo@example.com --role editor",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: namesOf(env, "team"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if role == "" {
				return fmt.Errorf("give the member's --role: owner, editor or reader")
			}
			s, err := connect(cmd, env)
			if err != nil {
				return err
			}
			team, email := args[0], args[1]
			t, err := s.client.UpdateTeam(cmd.Context(), team, &client.TeamRequest{Members: []client.TeamMemberRequest{{Email: email, Role: role}}})
			if err != nil {
				return s.teamHint(cmd.Context(), err, team, true)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s is %s of team %s; its members: %s.\n", email, withArticle(role), t.Name, memberList(t.Members))
			return nil
		},
	}
	cmd.Flags().StringVar(&role, "role", "", "the member's role: owner, editor or reader")
	_ = cmd.RegisterFlagCompletionFunc("role", cobra.FixedCompletions([]string{"owner", "editor", "reader"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func withArticle(role string) string {
	if role != "" && strings.ContainsRune("aeiou", rune(role[0])) {
		return "an " + role
	}
	return "a " + role
}

func newTeamRemoveMemberCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:               "remove-member TEAM EMAIL",
		Short:             "Remove a member from a team and from its approver groups",
		Example:           "  baton team remove-member payments bo@example.com",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: teamMembers(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := connect(cmd, env)
			if err != nil {
				return err
			}
			team, email := args[0], args[1]
			// The API ignores an email that is no member's; say so rather than "removed".
			t, err := s.client.GetTeam(cmd.Context(), team)
			if err != nil {
				return s.teamHint(cmd.Context(), err, team, false)
			}
			found := false
			for _, m := range t.Members {
				found = found || strings.EqualFold(m.Email, email)
			}
			if !found {
				return fmt.Errorf("%s is no member of team %s (its members: %s)", email, team, memberList(t.Members))
			}
			if err := s.client.RemoveTeamMembers(cmd.Context(), team, []client.MemberRef{{Email: email}}); err != nil {
				return s.teamHint(cmd.Context(), err, team, true)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s removed from team %s.\n", email, team)
			return nil
		},
	}
}

// teamMembers completes a team, then the emails of its members.
func teamMembers(env *Env) completeFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return namesOf(env, "team")(cmd, args, "")
		}
		if len(args) > 1 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		s, err := connect(cmd, env)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		t, err := s.client.GetTeam(cmd.Context(), args[0])
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, m := range t.Members {
			out = append(out, m.Email+"\t"+m.Role)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

var approverCols = []printer.Column[client.ApproverGroup]{
	col("GROUP", func(g client.ApproverGroup) string { return g.Name }),
	col("APPROVERS", func(g client.ApproverGroup) string {
		out := make([]string, len(g.Approvers))
		for i, m := range g.Approvers {
			out[i] = person(m.Email, m.Name, m.ID)
		}
		return strings.Join(out, ", ")
	}),
	wideCol("ID", func(g client.ApproverGroup) string { return g.ID }),
}

func newTeamApproversCmd(env *Env) *cobra.Command {
	return teamListCmd(env, &cobra.Command{
		Use:   "approvers [TEAM]",
		Short: "List a team's approver groups and their approvers",
		Long: `Lists the team's approver groups: an approval task naming a group (approverGroupRef) is
answered only by its approvers.`,
		Example: "  baton team approvers payments\n  baton team approvers -o json",
	}, func(t *client.Team) []client.ApproverGroup { return t.ApproverGroups }, approverCols)
}

func newTeamSetApproversCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "set-approvers TEAM GROUP EMAIL...",
		Short: "Make an approver group's approvers exactly these members, creating the group if needed",
		Long: `Makes GROUP of TEAM hold exactly the members given by EMAIL (replacing its approvers),
creating the group when the team has none of that name. Approvers must be members of the
team: baton team add-member first.`,
		Example:           "  baton team set-approvers payments leads ana@example.com bo@example.com",
		Args:              cobra.MinimumNArgs(3),
		ValidArgsFunction: namesOf(env, "team"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := connect(cmd, env)
			if err != nil {
				return err
			}
			team, group, emails := args[0], args[1], args[2:]
			t, err := s.client.UpdateTeam(cmd.Context(), team, &client.TeamRequest{
				ApproverGroups: []client.ApproverGroupRequest{{Name: group, Approvers: emails}}})
			if err != nil {
				return s.teamHint(cmd.Context(), err, team, true)
			}
			for _, g := range t.ApproverGroups {
				if g.Name == group {
					fmt.Fprintf(cmd.OutOrStdout(), "Approver group %s of team %s: %s.\n", g.Name, t.Name, approverCols[1].Value(nil, g))
					return nil
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Approver group %s of team %s set.\n", group, t.Name)
			return nil
		},
	}
}

// teamHint adds to a team's error what to do about it.
func (s *session) teamHint(ctx context.Context, err error, team string, changes bool) error {
	switch {
	case client.HasReason(err, "TEAM_NOT_FOUND"):
		return fmt.Errorf("%w\nbaton get teams lists the teams you see", err)
	case client.HasReason(err, "TEAM_LAST_OWNER"):
		return fmt.Errorf("%w\nmake another member owner first: baton team add-member %s EMAIL --role owner", err, team)
	case client.HasReason(err, "TEAM_INVALID_USER_ROLE"):
		var names []string
		if roles, rerr := s.client.GetTeamRoles(ctx); rerr == nil {
			for _, r := range roles {
				names = append(names, r.Name)
			}
		}
		if len(names) == 0 {
			names = []string{"owner", "editor", "reader"}
		}
		return fmt.Errorf("%w\nthe roles are %s", err, strings.Join(names, ", "))
	case client.HasReason(err, "TEAM_NON_UNIQUE_NAME"):
		return fmt.Errorf("%w\nchoose another name, or see the team with baton describe team %s", err, team)
	case changes && client.IsForbidden(err):
		return fmt.Errorf("%w\nmembers, roles and approver groups change only by an owner of the team logged in as a user, or by an admin", err)
	case client.HasReason(err, "TEAM_INVALID_REQ") && strings.Contains(err.Error(), "member"):
		return fmt.Errorf("%w\nadd them to the team first: baton team add-member %s EMAIL --role editor", err, team)
	}
	return s.hint(err)
}

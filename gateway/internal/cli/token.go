package cli

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-flow/baton/gateway/internal/cli/config"
	"github.com/baton-flow/baton/gateway/internal/cli/printer"
	"github.com/baton-flow/baton/libs/client"
)

// newTokenCmd is `baton token`: API tokens for people, CI and workers.
func newTokenCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "token",
		Aliases: []string{"tokens"},
		Short:   "Create, list and revoke API tokens",
		Long: `A token is how a script, a CI job, a worker or a person calls the API. Its type says
whom it acts for: global (the instance, by its permissions), team (one team), workflow (one
workflow of a team, narrowed by its permissions) or user (a user, with their roles). Only a
hash of the secret is kept: it is printed once, when the token is created.`,
		Example: `  baton token create --type team --name ci --permission '**/read' --permission 'workflowrun/write'
  baton token list
  baton token revoke 0193a1b2c3`,
	}
	cmd.AddCommand(newTokenCreateCmd(env), newTokenListCmd(env), newTokenRevokeCmd(env))
	return cmd
}

var tokenTypes = []string{"global", "team", "workflow", "user"}

func newTokenCreateCmd(env *Env) *cobra.Command {
	var typ, principal, name, description, expires, output string
	var permissions []string
	cmd := &cobra.Command{
		Use:   "create --type global|team|workflow|user --name NAME",
		Short: "Create a token and print its secret, once",
		Long: `Creates a token and prints its secret: it is not shown again, so keep it now.
--principal is whom it acts for: a team token's team (default: the context's team), a
workflow token's WORKFLOW or TEAM/WORKFLOW, a user token's user id or email; a global token
has none. --permission (repeatable) narrows what it may do, as <resource>/<action>
(**/read, workflowrun/write, …); a token never holds more rights than yours. --expires is a
date (YYYY-MM-DD, RFC 3339) or a duration from now (90d, 12h); without it the token does
not expire. -o json prints the API's answer, secret included.`,
		Example: `  baton token create --type team --name ci --permission '**/read' --expires 90d
  baton token create --type workflow --principal deploy --name deploy-hook
  baton token create --type global --name metrics --permission 'insights/read' -o json | jq -r .token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := printer.ParseFormat(output)
			if err != nil {
				return err
			}
			if !slices.Contains(tokenTypes, typ) {
				return fmt.Errorf("--type %q: use one of %s", typ, strings.Join(tokenTypes, ", "))
			}
			if name == "" {
				return fmt.Errorf("give the token a --name, to know it by in baton token list")
			}
			s, err := connect(cmd, env)
			if err != nil {
				return err
			}
			named := principal // as given: a user's email reads better than their id
			if principal, err = s.principal(cmd.Context(), typ, principal); err != nil {
				return err
			}
			if typ != "user" {
				named = principal
			}
			req := &client.TokenCreateRequest{Type: typ, Name: name, Principal: principal, Description: description, Permissions: permissions}
			if expires != "" {
				when, err := parseExpiry(expires, time.Now())
				if err != nil {
					return fmt.Errorf("--expires: %w", err)
				}
				req.ExpirationDate = when.UTC().Format(time.RFC3339)
			}
			created, err := s.client.CreateToken(cmd.Context(), req)
			if err != nil {
				return s.tokenHint(err)
			}
			p := printer.New(format)
			if format == printer.JSON || format == printer.YAML {
				return printer.Object(cmd.OutOrStdout(), p, created, nil)
			}
			out := cmd.OutOrStdout()
			whom := typ
			if named != "" {
				whom += " " + named
			}
			expiry := "it does not expire"
			if !created.ExpirationDate.IsZero() {
				expiry = "it expires " + created.ExpirationDate.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(out, "Token %s (%s, %s) created; %s.\n\n    %s\n\n", created.ID, name, whom, expiry, created.Token)
			fmt.Fprintf(out, "This secret is not shown again: keep it now (baton token revoke %s ends it).\n", created.ID)
			fmt.Fprintf(out, "Use it with:\n  baton login --server %s --token %s\nor, for one command or a CI job:\n  export %s=%s\n",
				s.ctx.Server, created.Token, config.EnvToken, created.Token)
			return nil
		},
	}
	addOutputFlag(cmd, &output)
	f := cmd.Flags()
	f.StringVar(&typ, "type", "", "whom the token acts for: global, team, workflow or user")
	f.StringVar(&principal, "principal", "", "the team, workflow (TEAM/WORKFLOW) or user (id or email) it acts for")
	f.StringVar(&name, "name", "", "the token's name")
	f.StringVar(&description, "description", "", "what the token is for")
	f.StringArrayVar(&permissions, "permission", nil, "a permission, <resource>/<action> (repeatable)")
	f.StringVar(&expires, "expires", "", "when it expires: a date, or a duration from now such as 90d")
	_ = cmd.RegisterFlagCompletionFunc("type", cobra.FixedCompletions(tokenTypes, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// principal is the principal a token of typ is made for, given p.
func (s *session) principal(ctx context.Context, typ, p string) (string, error) {
	switch typ {
	case "global":
		if p != "" {
			return "", fmt.Errorf("a global token has no --principal: it acts by its permissions across the instance")
		}
	case "team":
		if p == "" {
			p = s.ctx.Team
		}
		if p == "" {
			return "", fmt.Errorf("a team token needs its team: give --principal TEAM, or --team")
		}
	case "workflow":
		if p == "" {
			return "", fmt.Errorf("a workflow token needs its workflow: give --principal WORKFLOW or TEAM/WORKFLOW")
		}
		team, name, err := s.inTeam(p)
		if err != nil {
			return "", err
		}
		p = team + "/" + name
	case "user":
		if p == "" {
			return "", fmt.Errorf("a user token needs its user: give --principal with the user's id or email")
		}
		if strings.Contains(p, "@") {
			return s.userByEmail(ctx, p)
		}
	}
	return p, nil
}

// userByEmail answers the id of the user with this email.
func (s *session) userByEmail(ctx context.Context, email string) (string, error) {
	for u, err := range s.client.Users(ctx, client.UserQuery{}) {
		if err != nil {
			return "", s.hint(err)
		}
		if strings.EqualFold(u.Email, email) {
			return u.ID, nil
		}
	}
	return "", fmt.Errorf("no user has the email %s: a user becomes known when added to a team (baton team add-member) or at first login", email)
}

// parseExpiry reads --expires: a duration from now (90d, 12h, 1h30m) or a date.
func parseExpiry(s string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 {
			return now.AddDate(0, 0, n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(d), nil
	}
	t, err := parseTime(s, time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a duration from now (90d, 12h) nor a date (YYYY-MM-DD, RFC 3339)", s)
	}
	if !t.After(now) {
		return time.Time{}, fmt.Errorf("%s is past: a token expires in the future", s)
	}
	return t, nil
}

// tokenHint adds to a refused creation what to do about it.
func (s *session) tokenHint(err error) error {
	switch {
	case client.HasReason(err, "TOKEN_INVALID_PERMISSION"):
		return fmt.Errorf("%w\na token holds at most the rights of whoever creates it: ask for fewer --permission, or have an owner or admin create it", err)
	case client.IsForbidden(err):
		return fmt.Errorf("%w\ncreating a token takes the token/write permission where it acts: a team owner's or an admin's token has it", err)
	case client.HasReason(err, "TEAM_NOT_FOUND"):
		return fmt.Errorf("%w\nbaton get teams lists the teams you see", err)
	case client.HasReason(err, "WORKFLOW_NOT_FOUND"):
		return fmt.Errorf("%w\nbaton get workflows lists the team's workflows", err)
	}
	return s.hint(err)
}

func newTokenListCmd(env *Env) *cobra.Command {
	var output string
	var types []string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the tokens you may see: those you created, your teams' and, for admins, all",
		Example: `  baton token list
  baton token list --type team,workflow -o wide`,
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
			rows, err := client.Collect(s.client.Tokens(cmd.Context(), client.TokenQuery{Types: types}))
			if err != nil {
				return s.hint(err)
			}
			if rows == nil {
				rows = []client.Token{}
			}
			return printer.Print(cmd.OutOrStdout(), printer.New(format), rows, rows, tokenCols)
		},
	}
	addOutputFlag(cmd, &output)
	cmd.Flags().StringSliceVar(&types, "type", nil, "only tokens of these types (global, team, workflow, user, session)")
	return cmd
}

func newTokenRevokeCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:               "revoke ID",
		Short:             "Revoke a token, and the tokens it created: they are refused from now on",
		Example:           "  baton token revoke 0193a1b2c3",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: namesOf(env, "token"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := connect(cmd, env)
			if err != nil {
				return err
			}
			t, err := s.client.RevokeToken(cmd.Context(), args[0])
			if err != nil {
				if client.IsNotFound(err) {
					return fmt.Errorf("%w\nbaton token list lists the tokens you may see", err)
				}
				return s.hint(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Token %s (%s, %s) revoked.\n", t.ID, t.Name, t.Type)
			return nil
		},
	}
}

package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-flow/baton/gateway/internal/cli/config"
	"github.com/baton-flow/baton/libs/client"
)

// newLoginCmd is `baton login`: checks a token against a server, then keeps both as a
// named context and makes it the current one.
func newLoginCmd(env *Env) *cobra.Command {
	var server, token, team string
	cmd := &cobra.Command{
		Use:   "login --server URL --token TOKEN",
		Short: "Check a token against a server and keep both as a named context",
		Long: `Calls the server with the token to check it and learn who it acts as, then keeps
the server and token as a context (named by --context, "default" when not given) in
<user config dir>/baton/config.yaml, readable only by you, and makes it the current one.
--token - reads the token from standard input, so it stays out of the shell's history.
baton server prints an admin token to log in with.`,
		Example: `  baton login --server http://127.0.0.1:8080 --token btg_...
  baton login --server http://127.0.0.1:8080 --token btg_... --team infra
  baton login --context prod --server https://baton.example.com --token - < token.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			name, _ := cmd.Flags().GetString("context")
			if name == "" {
				name = config.DefaultContext
			}
			if server == "" {
				server = env.Getenv(config.EnvServer)
			}
			if server == "" {
				return errors.New("no server: give --server URL (baton server prints it), or set BATON_SERVER")
			}
			if token == "-" {
				line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if err != nil && line == "" {
					return fmt.Errorf("read the token from standard input: %w", err)
				}
				token = strings.TrimSpace(line)
			}
			if token == "" {
				token = env.Getenv(config.EnvToken)
			}
			if token == "" {
				return errors.New("no token: give --token TOKEN (or --token - to read it from standard input), or set BATON_TOKEN")
			}
			c := config.Context{Name: name, Server: config.NormalizeServer(server), Token: token, Team: team}
			cl, err := env.Connect(c)
			if err != nil {
				return err
			}
			who, err := whoAmI(cmd.Context(), cl)
			if client.IsUnauthorized(err) {
				return fmt.Errorf("%s refused the token: check that it is whole, not expired nor revoked (an admin lists tokens with `baton get tokens`)", c.Server)
			}
			if unreachable(err) {
				return fmt.Errorf("cannot reach %s (%w): check the URL, and that the server runs (baton server starts one)", c.Server, err)
			}
			if err != nil {
				return fmt.Errorf("check the token against %s: %w", c.Server, err)
			}
			c.User = who
			path, f, err := load(env)
			if err != nil {
				return err
			}
			f.Put(c)
			f.CurrentContext = name
			if err := config.Save(path, f); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Logged in to %s as %s (context %q, kept in %s).\n", c.Server, who, name, path)
			return nil
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the server's URL, such as http://127.0.0.1:8080 (BATON_SERVER)")
	cmd.Flags().StringVar(&token, "token", "", "the token, or - to read it from standard input (BATON_TOKEN)")
	cmd.Flags().StringVar(&team, "team", "", "the team commands work in when not told one (BATON_TEAM)")
	return cmd
}

// unreachable reports whether err is a request that got no answer at all (no API error,
// nor the command's end).
func unreachable(err error) bool {
	var ue *url.Error
	_, isAPI := client.AsError(err)
	return !isAPI && errors.As(err, &ue) && !errors.Is(err, context.Canceled)
}

// unauthorizedHint turns a refused token, or a server that does not answer, into what to
// do about it.
func unauthorizedHint(s *session, err error) error {
	if unreachable(err) {
		return fmt.Errorf("cannot reach %s (%w): check that it runs there, or choose another context (baton context list)", s.ctx.Server, err)
	}
	if !client.IsUnauthorized(err) {
		return err
	}
	name := s.ctx.Name
	if name == "" || s.envToken {
		return fmt.Errorf("%s refused the token (BATON_TOKEN): check it, or unset it and run `baton login --server %s --token TOKEN`", s.ctx.Server, s.ctx.Server)
	}
	return fmt.Errorf("%s refused the token of context %q: run `baton login --context %s --server %s --token TOKEN`", s.ctx.Server, name, name, s.ctx.Server)
}

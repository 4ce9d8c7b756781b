package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newCompletionCmd is `baton completion bash|zsh|fish`.
func newCompletionCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print the shell completion script",
		Long: `Prints the script that completes baton's commands, flags, context names and, from
the current context's server, workflow and run names.`,
		Example: `  source <(baton completion bash)
  baton completion zsh > "${fpath[1]}/_baton"
  baton completion fish > ~/.config/fish/completions/baton.fish`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"bash", "zsh", "fish"},
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			}
			return fmt.Errorf("no completion for %q: use bash, zsh or fish", args[0])
		},
	}
}

type completeFunc = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// kindAndName completes a kind, then a name of that kind fetched from the server.
func kindAndName(env *Env) completeFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			var out []string
			for _, k := range kinds() {
				out = append(out, k.name+"s")
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		case 1:
			k, err := findKind(args[0])
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return serverNames(cmd, env, k)
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// namesOf completes the first argument with names of the kind called word.
func namesOf(env *Env, word string) completeFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		k, err := findKind(word)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return serverNames(cmd, env, k)
	}
}

// serverNames asks the context's server for the names of k; a completion that cannot
// reach it offers nothing rather than files.
func serverNames(cmd *cobra.Command, env *Env, k kind) ([]string, cobra.ShellCompDirective) {
	s, err := connect(cmd, env)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	team := s.ctx.Team
	if k.team && team == "" {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names, err := k.names(cmd.Context(), s, team)
	if err != nil && len(names) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

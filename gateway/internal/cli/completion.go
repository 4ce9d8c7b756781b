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

package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/baton-flow/baton/gateway/internal/cli/config"
	"github.com/baton-flow/baton/gateway/internal/cli/printer"
)

// newContextCmd is `baton context`: the named contexts kept by login.
func newContextCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "context",
		Aliases: []string{"contexts", "ctx"},
		Short:   "List, choose and delete the named contexts (a server and its token each)",
		Example: `  baton context list
  baton context use prod
  baton context current
  baton context delete staging`,
	}
	var output string
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the contexts; the current one is marked *",
		Example: "  baton context list\n  baton context list -o yaml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := printer.ParseFormat(output)
			if err != nil {
				return err
			}
			_, f, err := load(env)
			if err != nil {
				return err
			}
			type row struct {
				Name    string `json:"name"`
				Current bool   `json:"current"`
				Server  string `json:"server"`
				User    string `json:"user,omitempty"`
			}
			rows := make([]row, 0, len(f.Contexts))
			for _, c := range f.Contexts {
				rows = append(rows, row{Name: c.Name, Current: c.Name == f.CurrentContext, Server: c.Server, User: c.User})
			}
			cols := []printer.Column[row]{
				{Header: "CURRENT", Value: func(_ *printer.Printer, r row) string {
					if r.Current {
						return "*"
					}
					return " "
				}},
				{Header: "NAME", Value: func(_ *printer.Printer, r row) string { return r.Name }},
				{Header: "SERVER", Value: func(_ *printer.Printer, r row) string { return r.Server }},
				{Header: "USER", Value: func(_ *printer.Printer, r row) string { return r.User }},
			}
			// Tokens are never printed: json and yaml show what the table shows.
			return printer.Print(cmd.OutOrStdout(), printer.New(format), rows, rows, cols)
		},
	}
	addOutputFlag(list, &output)
	use := &cobra.Command{
		Use:               "use NAME",
		Short:             "Make NAME the current context",
		Example:           "  baton context use prod",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: contextNames(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, f, err := load(env)
			if err != nil {
				return err
			}
			if _, ok := f.Find(args[0]); !ok {
				return unknownContext(f, args[0])
			}
			f.CurrentContext = args[0]
			if err := config.Save(path, f); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Switched to context %q.\n", args[0])
			return nil
		},
	}
	current := &cobra.Command{
		Use:     "current",
		Short:   "Print the current context's name",
		Example: "  baton context current",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, f, err := load(env)
			if err != nil {
				return err
			}
			if f.CurrentContext == "" {
				return fmt.Errorf("no current context: run `baton login --server URL --token TOKEN`, or `baton context use NAME`")
			}
			fmt.Fprintln(cmd.OutOrStdout(), f.CurrentContext)
			return nil
		},
	}
	del := &cobra.Command{
		Use:               "delete NAME",
		Aliases:           []string{"rm"},
		Short:             "Forget the context NAME and its token",
		Example:           "  baton context delete staging",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: contextNames(env),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, f, err := load(env)
			if err != nil {
				return err
			}
			if !f.Delete(args[0]) {
				return unknownContext(f, args[0])
			}
			if err := config.Save(path, f); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted context %q.\n", args[0])
			return nil
		},
	}
	cmd.AddCommand(list, use, current, del)
	return cmd
}

func load(env *Env) (string, *config.File, error) {
	path, err := config.Path(env.Getenv)
	if err != nil {
		return "", nil, err
	}
	f, err := config.Load(path)
	return path, f, err
}

func unknownContext(f *config.File, name string) error {
	names := make([]string, 0, len(f.Contexts))
	for _, c := range f.Contexts {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return fmt.Errorf("no context named %q, and none kept: run `baton login --context %s --server URL --token TOKEN`", name, name)
	}
	return fmt.Errorf("no context named %q (there are: %v)", name, names)
}

// contextNames completes a context's name.
func contextNames(env *Env) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		_, f, err := load(env)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names := make([]string, 0, len(f.Contexts))
		for _, c := range f.Contexts {
			names = append(names, c.Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// addOutputFlag adds -o to a read command.
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", "table", "output format: table, wide, json or yaml")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(printer.Formats, cobra.ShellCompDirectiveNoFileComp))
}

package cli_test

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/gateway/internal/cli"
)

// TestEveryCommandHasHelp: each command says what it does and shows an example.
func TestEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	seen := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			seen++
			assert.NotEmpty(t, sub.Short, "%s has no short help", sub.CommandPath())
			assert.NotEmpty(t, sub.Example, "%s has no example", sub.CommandPath())
			walk(sub)
		}
	}
	walk(cli.NewRoot(&cli.Env{Getenv: func(string) string { return "" }}))
	assert.Equal(t, 43, seen, "every command is there")
}

package doctest_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/baton-flow/baton/gateway/internal/cli"
)

// TestMain makes the examples' `baton` this test binary: run under that name, it is the
// baton command; otherwise it runs the tests with a directory holding that name first on
// PATH, and BATON_CONFIG pointing into it, so that the examples' contexts are kept there,
// not in the user's configuration.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "baton" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := cli.Main(ctx, os.Args[1:], cli.Env{Getenv: os.Getenv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
		stop()
		os.Exit(code)
	}
	os.Exit(withBaton(m))
}

func withBaton(m *testing.M) int {
	dir, err := os.MkdirTemp("", "doctest-baton-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	exe, err := os.Executable()
	if err == nil {
		err = os.Symlink(exe, filepath.Join(dir, "baton"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "make baton:", err)
		return 1
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	os.Setenv("BATON_CONFIG", filepath.Join(dir, "config", "baton.yaml"))
	return m.Run()
}

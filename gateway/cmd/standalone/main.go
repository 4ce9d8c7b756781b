// Command standalone runs the gateway and every Baton service in one process, on SQLite
// files of their own and an embedded Kafka: it is `baton server` under its former name, its
// arguments the server's flags (see docs/cli.md).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/baton-flow/baton/gateway/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	args := append([]string{"server"}, os.Args[1:]...)
	code := cli.Main(ctx, args, cli.Env{Getenv: os.Getenv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}

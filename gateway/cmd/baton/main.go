// Command baton runs Baton on this machine (baton server) and calls a Baton server: it
// submits and watches runs and reads what the server holds. See docs/cli.md.
//
//	go install github.com/baton-flow/baton/gateway/cmd/baton@latest && baton server
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
	code := cli.Main(ctx, os.Args[1:], cli.Env{Getenv: os.Getenv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}

package host

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/baton-flow/baton/libs/startup"
)

// Builder makes the unit a process serves from its connected platform.
type Builder func(ctx context.Context, p *Platform) (Unit, error)

// Main is the whole of a service's main: `main() { host.Main("identity", opts, build) }`.
// With the argument `healthcheck` it probes a running instance's /health instead (for
// container health checks, where images carry no curl).
func Main(name string, opts Options, build Builder) {
	if len(os.Args) > 1 && os.Args[1] == "healthcheck" {
		os.Exit(healthcheck(os.Getenv, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, name, os.Getenv, opts, build); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Run connects a platform from the environment, builds the unit and serves it until ctx
// ends. Tests call it directly.
func Run(ctx context.Context, name string, getenv func(string) string, opts Options, build Builder) error {
	env, err := LoadEnv(getenv)
	if err != nil {
		return err
	}
	p, err := Connect(ctx, name, env, opts)
	if err != nil {
		return err
	}
	defer p.Close(context.WithoutCancel(ctx))
	unit, err := buildWithin(ctx, p, build, BuildWithin)
	if err != nil {
		return fmt.Errorf("build %s: %w", name, err)
	}
	if unit.Addr == "" {
		unit.Addr = env.HTTPAddr
	}
	if unit.AdvertiseAddr == "" {
		unit.AdvertiseAddr = env.AdvertiseAddr
	}
	return Serve(ctx, p, unit)
}

func healthcheck(getenv func(string) string, stderr io.Writer) int {
	addr := getenv("BATON_GATEWAY_ADDR")
	if addr == "" {
		addr = getenv("BATON_HTTP_ADDR")
	}
	if addr == "" {
		addr = "0.0.0.0:8080"
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		fmt.Fprintln(stderr, "healthcheck:", err)
		return 1
	}
	client := http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get("http://" + net.JoinHostPort("127.0.0.1", port) + "/health")
	if err != nil {
		fmt.Fprintln(stderr, "healthcheck:", err)
		return 1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(stderr, "healthcheck: status", resp.StatusCode)
		return 1
	}
	return 0
}

// BuildWithin bounds a unit's build: its store's migrations, indexes and seeds, each
// bounded by package startup, and whatever else it waits for. A build that has not
// returned by then (a call into a store that does not answer, without a deadline) fails
// the start, so that the process exits non-zero and is started again rather than hang
// without ever becoming ready.
var BuildWithin = 2*startup.Within + time.Minute

// buildWithin runs build, failing when it has not returned within d; the build's
// goroutine is left behind, for the process to exit.
func buildWithin(ctx context.Context, p *Platform, build Builder, d time.Duration) (Unit, error) {
	type built struct {
		u   Unit
		err error
	}
	done := make(chan built, 1)
	go func() {
		u, err := build(ctx, p)
		done <- built{u, err}
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case b := <-done:
		return b.u, b.err
	case <-t.C:
		return Unit{}, fmt.Errorf("not built within %s: a call at startup does not return", d)
	}
}

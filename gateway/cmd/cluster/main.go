// Command cluster runs Baton's distributed mode on this machine, every service a process of
// its own (gateway/internal/cluster), and the chaos workload on it.
//
//	cluster [up] [flags]     start the cluster, print where everything listens, stop on Ctrl-C
//	cluster chaos [flags]    start a cluster, run the mixed workload while killing processes, check it
//	cluster store  -dir D -addr A              serve the Mongo-wire store (the cluster starts it)
//	cluster broker -addr A -topic-prefix P     serve the Kafka-protocol broker (likewise)
//
// `make cluster` and `make chaos` build the binaries into bin/cluster and run this one.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/baton-flow/baton/gateway/internal/cluster"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	cmd := "up"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "up":
		return up(ctx, args, stdin, stdout)
	case "chaos":
		return chaos(ctx, args, stdout)
	case "store":
		fs := flag.NewFlagSet("store", flag.ContinueOnError)
		dir := fs.String("dir", "", "data directory")
		addr := fs.String("addr", "127.0.0.1:0", "listen address")
		if err := fs.Parse(args); err != nil {
			return err
		}
		return cluster.ServeStore(ctx, *dir, *addr, stdout)
	case "broker":
		fs := flag.NewFlagSet("broker", flag.ContinueOnError)
		addr := fs.String("addr", "127.0.0.1:0", "listen address")
		prefix := fs.String("topic-prefix", cluster.TopicPrefix, "topic prefix")
		if err := fs.Parse(args); err != nil {
			return err
		}
		return cluster.ServeBroker(ctx, *addr, *prefix, stdout)
	default:
		return fmt.Errorf("unknown command %q: want up, chaos, store or broker", cmd)
	}
}

// clusterFlags are the flags up and chaos share.
func clusterFlags(fs *flag.FlagSet, cfg *cluster.Config) {
	self, _ := os.Executable()
	bin := filepath.Dir(self)
	fs.StringVar(&cfg.Bin, "bin", bin, "directory of the built binaries (gateway, the services, cluster)")
	fs.StringVar(&cfg.Consul, "consul", filepath.Join(bin, "..", "..", ".tools", "bin", "consul"), "consul binary")
	fs.IntVar(&cfg.Replicas, "replicas", 2, "replicas of runs, runner, schedules and integrations")
	fs.IntVar(&cfg.Gateways, "gateways", 1, "gateways, each on a port of its own")
}

func up(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	var cfg cluster.Config
	clusterFlags(fs, &cfg)
	fs.StringVar(&cfg.Dir, "dir", "bin/cluster/run", "run directory: data, logs, keys (kept across starts)")
	fs.StringVar(&cfg.GatewayAddr, "addr", "127.0.0.1:8080", "the first gateway's address (port 0: a free one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.Out = stdout
	fmt.Fprintf(stdout, "starting Baton's distributed mode in %s ...\n", cfg.Dir)
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(stdout, "stopping every process ...")
		c.Stop()
		fmt.Fprintln(stdout, "stopped")
	}()
	printCluster(stdout, c, cfg.Dir)
	fmt.Fprint(stdout, "\nCommands: status, kill <name>, start <name>, restart <name>; Ctrl-C stops everything.\n")

	lines := make(chan string)
	go func() {
		s := bufio.NewScanner(stdin)
		for s.Scan() {
			lines <- s.Text()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line := <-lines:
			if err := command(ctx, c, stdout, strings.Fields(line)); err != nil {
				fmt.Fprintln(stdout, err)
			}
		}
	}
}

func chaos(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	var cfg cluster.Config
	var ccfg cluster.ChaosConfig
	clusterFlags(fs, &cfg)
	fs.StringVar(&cfg.Dir, "dir", "", "run directory (default a new one under bin/cluster)")
	fs.DurationVar(&ccfg.For, "for", 5*time.Minute, "how long processes are killed while the workload goes on")
	fs.DurationVar(&ccfg.KillEvery, "kill-every", 4*time.Second, "longest pause between two kills")
	fs.DurationVar(&ccfg.DownFor, "down-for", 2*time.Second, "longest a killed process stays down")
	fs.DurationVar(&ccfg.SubmitEvery, "submit-every", 500*time.Millisecond, "pause between two workflow submits")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join("bin", "cluster", "chaos-"+time.Now().Format("20060102-150405"))
	}
	cfg.GatewayAddr = "127.0.0.1:0"
	cfg.Gateways = max(cfg.Gateways, 2)
	cfg.Env = cluster.ChaosEnv
	cfg.Out = stdout
	ccfg.Dir = filepath.Join(cfg.Dir, "executions")
	ccfg.Out = stdout
	fmt.Fprintf(stdout, "starting a cluster in %s ...\n", cfg.Dir)
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Stop()
	rep, err := cluster.RunChaos(ctx, c, ccfg)
	if err != nil {
		return err
	}
	rep.Print(stdout)
	if err := rep.Err(); err != nil {
		return fmt.Errorf("%w\nthe processes' logs: %s", err, filepath.Join(cfg.Dir, "logs"))
	}
	return nil
}

// command runs one of the commands typed while the cluster runs.
func command(ctx context.Context, c *cluster.Cluster, out io.Writer, words []string) error {
	if len(words) == 0 {
		return nil
	}
	if words[0] == "status" {
		w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "PROCESS\tSTARTS\tKILLS\tEXITED ON ITS OWN")
		for _, s := range c.Stats() {
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\n", s.Name, s.Starts, s.Kills, s.Failures)
		}
		return w.Flush()
	}
	if len(words) != 2 {
		return errors.New("want status, kill <name>, start <name> or restart <name>")
	}
	name := words[1]
	switch words[0] {
	case "kill":
		return c.Kill(name)
	case "start":
		return c.Start(ctx, name)
	case "restart":
		if err := c.Kill(name); err != nil {
			return err
		}
		return c.Start(ctx, name)
	default:
		return fmt.Errorf("unknown command %q", words[0])
	}
}

func printCluster(out io.Writer, c *cluster.Cluster, dir string) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "\nPROCESS\tLISTENS ON\tMETRICS\tLOG")
	for _, p := range c.Procs() {
		metrics := "-"
		if p.AdminAddr != "" {
			metrics = "http://" + p.AdminAddr + "/metrics"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", p.Name, p.Addr, metrics, p.Log)
	}
	_ = w.Flush()
	api := c.GatewayURLs()[0]
	fmt.Fprintf(out, "\nBaton (distributed) is running at %s/api/v2\nAdmin token: %s\nIn a browser: %s/ (sign in with the admin token)\n", api, c.Token, api)
	fmt.Fprintf(out, "Try: curl -H 'Authorization: Bearer %s' %s/api/v2/team/query\n", c.Token, api)
	fmt.Fprintf(out, "Consul: http://%s/ui   Store: %s   Broker: %s   Run directory: %s\n", c.ConsulAddr, c.StoreURI, c.Brokers, dir)
}

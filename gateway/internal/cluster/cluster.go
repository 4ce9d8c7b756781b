// Package cluster runs Baton's distributed mode on one machine, every part a process of its
// own, as a deployment runs it: a Consul agent in dev mode, a Mongo-wire store and a
// Kafka-protocol broker (libs/embedded, each served by the cluster command), then every
// service from its own binary, with two replicas each of runs, runner, schedules and
// integrations, and the gateway. All listen on loopback; each process's output goes to a
// file of its own under the run directory's logs/.
//
// The supervisor restarts a process that exits without being asked to, after a second,
// as a container runtime's restart policy would, and counts it: a Baton process must not
// exit on its own. Kill and Start let a caller (the chaos workload, chaos.go) take any
// process down with SIGKILL and bring it back on the same address.
//
// The store, the broker and Consul are not killed by chaos: the broker keeps messages in
// memory and Consul's dev mode its catalogue, so their restarts would test a deployment
// that no one runs. The store's data lives in the run directory and survives the cluster.
package cluster

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/baton-flow/baton/libs/secrets"
)

// Services are Baton's services, each a binary of the same name; the gateway comes last.
var Services = []string{"identity", "tasks", "workflows", "runs", "runner", "schedules", "integrations"}

// Replicated are the services run as several replicas (Config.Replicas).
var Replicated = []string{"runs", "runner", "schedules", "integrations"}

// TopicPrefix is the prefix of the cluster's topics.
const TopicPrefix = "baton."

// Config says what to run and where.
type Config struct {
	// Dir is the run directory: the store's files, each process's log (logs/), the
	// runners' working directories and the cluster's keys. Created if missing.
	Dir string
	// Bin holds the built binaries: gateway, the services and cluster (which serves the
	// store and the broker).
	Bin string
	// Consul is the consul binary.
	Consul string
	// Replicas of each of Replicated (default 2).
	Replicas int
	// Gateways is how many gateways run (default 1), each on a port of its own.
	Gateways int
	// GatewayAddr is the first gateway's address (default 127.0.0.1:8080; port 0 picks a
	// free one). The others take free ports.
	GatewayAddr string
	// Env adds variables to every Baton process (after the cluster's own, so they win).
	Env []string
	// Out receives the supervisor's notes: starts, exits, restarts.
	Out io.Writer
}

// Proc is one process of the cluster.
type Proc struct {
	// Name is unique: "runs-2", "gateway-1", "store".
	Name string
	// Service is what it runs: a service's name, "gateway", "store", "broker" or "consul".
	Service string
	// Addr is where it listens (its HTTP API for Baton's processes).
	Addr string
	// AdminAddr serves its /metrics, for Baton's processes.
	AdminAddr string
	// Log is its output file.
	Log string

	bin   string
	args  []string
	env   []string
	ready func(ctx context.Context) error

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	// want is whether it should run: an exit while it is true is unexpected.
	want     bool
	starts   int
	kills    int
	failures int
}

// Cluster is a running cluster.
type Cluster struct {
	cfg   Config
	procs []*Proc
	// Token is the gateway's admin token (BATON_BOOTSTRAP_TOKEN).
	Token string
	// StoreURI, Brokers and ConsulAddr are the shared infrastructure's addresses.
	StoreURI, Brokers, ConsulAddr string

	out      io.Writer
	outMu    sync.Mutex
	ctx      context.Context
	cancel   context.CancelFunc
	watchers sync.WaitGroup
}

// restartAfter is how long the supervisor waits before starting again a process that
// exited on its own.
const restartAfter = time.Second

// readyWithin bounds the wait for a process to answer once started: far above the few
// seconds they take, on a machine busy compiling.
const readyWithin = 2 * time.Minute

// Start starts the whole cluster and returns once every process answers.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.Replicas <= 0 {
		cfg.Replicas = 2
	}
	if cfg.Gateways <= 0 {
		cfg.Gateways = 1
	}
	if cfg.GatewayAddr == "" {
		cfg.GatewayAddr = "127.0.0.1:8080"
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, err
	}
	cfg.Dir = dir
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o700); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	for _, name := range append([]string{"gateway", "cluster"}, Services...) {
		if _, err := os.Stat(filepath.Join(cfg.Bin, name)); err != nil {
			return nil, fmt.Errorf("binary %s: %w (build them first: make cluster does)", name, err)
		}
	}
	if _, err := os.Stat(cfg.Consul); err != nil {
		return nil, fmt.Errorf("consul binary: %w (make tools builds it)", err)
	}
	keys := map[string]string{}
	for _, k := range []string{"admin-token", "service-key", "secret-key"} {
		if keys[k], err = loadOrCreateKey(filepath.Join(dir, k)); err != nil {
			return nil, err
		}
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &Cluster{cfg: cfg, Token: keys["admin-token"], out: cfg.Out, ctx: runCtx, cancel: cancel}
	if err := c.plan(keys); err != nil {
		cancel()
		return nil, err
	}
	// Infrastructure first, one after another; then every Baton process at once.
	infra := c.procs[:3]
	for _, p := range infra {
		if err := c.startAndWait(ctx, p); err != nil {
			c.Stop()
			return nil, err
		}
	}
	errs := make(chan error, len(c.procs))
	var wg sync.WaitGroup
	for _, p := range c.procs[3:] {
		wg.Go(func() { errs <- c.startAndWait(ctx, p) })
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	if err := errors.Join(all...); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// plan decides every process's ports, arguments and environment.
func (c *Cluster) plan(keys map[string]string) error {
	cfg := c.cfg
	ports, err := freePorts(7 + 2*(len(Services)+(cfg.Replicas-1)*len(Replicated)+cfg.Gateways))
	if err != nil {
		return err
	}
	next := func() string {
		p := ports[0]
		ports = ports[1:]
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
	}
	logOf := func(name string) string { return filepath.Join(cfg.Dir, "logs", name+".log") }

	// Consul in dev mode: everything in memory, on ports of its own.
	consulHTTP, serfLAN, serfWAN, server := next(), next(), next(), next()
	port := func(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }
	c.ConsulAddr = consulHTTP
	consul := &Proc{Name: "consul", Service: "consul", Addr: consulHTTP, Log: logOf("consul"), bin: cfg.Consul,
		args: []string{"agent", "-dev", "-node", "baton-cluster", "-bind", "127.0.0.1", "-client", "127.0.0.1",
			"-http-port", port(consulHTTP), "-serf-lan-port", port(serfLAN), "-serf-wan-port", port(serfWAN),
			"-server-port", port(server), "-dns-port", "-1", "-grpc-port", "-1", "-grpc-tls-port", "-1",
			"-log-level", "warn", "-hcl", "disable_update_check = true"}}
	consul.ready = func(ctx context.Context) error { return waitConsul(ctx, consulHTTP) }

	self := filepath.Join(cfg.Bin, "cluster")
	storeAddr := next()
	c.StoreURI = "mongodb://" + storeAddr + "/"
	store := &Proc{Name: "store", Service: "store", Addr: storeAddr, Log: logOf("store"), bin: self,
		args: []string{"store", "-dir", filepath.Join(cfg.Dir, "store"), "-addr", storeAddr}}
	store.ready = func(ctx context.Context) error { return waitTCP(ctx, storeAddr) }
	brokerAddr := next()
	c.Brokers = brokerAddr
	broker := &Proc{Name: "broker", Service: "broker", Addr: brokerAddr, Log: logOf("broker"), bin: self,
		args: []string{"broker", "-addr", brokerAddr, "-topic-prefix", TopicPrefix}}
	broker.ready = func(ctx context.Context) error { return waitTCP(ctx, brokerAddr) }
	c.procs = []*Proc{consul, store, broker}

	gateways := make([]string, cfg.Gateways)
	gateways[0] = cfg.GatewayAddr
	if _, p, err := net.SplitHostPort(cfg.GatewayAddr); err != nil {
		return fmt.Errorf("gateway address %q: %w", cfg.GatewayAddr, err)
	} else if p == "0" {
		gateways[0] = next()
	}
	for i := 1; i < cfg.Gateways; i++ {
		gateways[i] = next()
	}
	publicURL := "http://" + gateways[0]

	common := []string{
		"BATON_MONGO_URI=" + c.StoreURI, "BATON_KAFKA_BROKERS=" + c.Brokers, "BATON_KAFKA_TOPIC_PREFIX=" + TopicPrefix,
		"BATON_CONSUL_ADDR=" + consulHTTP, "BATON_SERVICE_KEY=" + keys["service-key"], secrets.EnvKey + "=" + keys["secret-key"],
		"BATON_LOG_LEVEL=info", "BATON_SHUTDOWN_TIMEOUT=5s", "BATON_PUBLIC_URL=" + publicURL,
	}
	baton := func(name, service, addr string, extra ...string) *Proc {
		p := &Proc{Name: name, Service: service, Addr: addr, AdminAddr: next(), Log: logOf(name),
			bin: filepath.Join(cfg.Bin, service)}
		p.env = slices.Concat(common, []string{"BATON_HTTP_ADDR=" + addr, "BATON_ADMIN_ADDR=" + p.AdminAddr}, extra, cfg.Env)
		p.ready = func(ctx context.Context) error { return waitHTTP(ctx, "http://"+addr+"/ready") }
		return p
	}
	for _, svc := range Services {
		n := 1
		if slices.Contains(Replicated, svc) {
			n = cfg.Replicas
		}
		for i := 1; i <= n; i++ {
			name := fmt.Sprintf("%s-%d", svc, i)
			var extra []string
			switch svc {
			case "identity":
				// A local cluster unlocks itself, as standalone mode does.
				extra = []string{"BATON_AUTO_ACTIVATE=true", "BATON_ACTIVATION_CODE_FILE=" + filepath.Join(c.cfg.Dir, "activation-code")}
			case "runner":
				// Each runner's workspaces and journal are its own, kept across its restarts.
				extra = []string{"BATON_RUNNER_ID=" + name, "BATON_RUNNER_WORKDIR=" + filepath.Join(c.cfg.Dir, name)}
			}
			c.procs = append(c.procs, baton(name, svc, next(), extra...))
		}
	}
	for i, addr := range gateways {
		c.procs = append(c.procs, baton(fmt.Sprintf("gateway-%d", i+1), "gateway", addr,
			"BATON_GATEWAY_ADDR="+addr, "BATON_BOOTSTRAP_TOKEN="+c.Token))
	}
	return nil
}

// Procs lists the cluster's processes, infrastructure first, the gateways last.
func (c *Cluster) Procs() []*Proc { return slices.Clone(c.procs) }

// Proc finds a process by name.
func (c *Cluster) Proc(name string) *Proc {
	for _, p := range c.procs {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// GatewayURLs are the API's base URLs, one per gateway ("http://127.0.0.1:8080").
func (c *Cluster) GatewayURLs() []string {
	var out []string
	for _, p := range c.procs {
		if p.Service == "gateway" {
			out = append(out, "http://"+p.Addr)
		}
	}
	return out
}

// Baton lists the names of Baton's processes: the services' replicas and the gateways,
// what chaos kills.
func (c *Cluster) Baton() []string {
	var out []string
	for _, p := range c.procs {
		if p.AdminAddr != "" {
			out = append(out, p.Name)
		}
	}
	return out
}

// Stats says how often each process was started, killed, and exited on its own.
type Stats struct {
	Name                    string
	Starts, Kills, Failures int
}

// Stats of every process, in the order of Procs.
func (c *Cluster) Stats() []Stats {
	out := make([]Stats, 0, len(c.procs))
	for _, p := range c.procs {
		p.mu.Lock()
		out = append(out, Stats{Name: p.Name, Starts: p.starts, Kills: p.kills, Failures: p.failures})
		p.mu.Unlock()
	}
	return out
}

// Kill sends SIGKILL to the process (and its process group) and waits for it to die; it
// stays down until Start.
func (c *Cluster) Kill(name string) error {
	p := c.Proc(name)
	if p == nil {
		return fmt.Errorf("no process %q", name)
	}
	p.mu.Lock()
	p.want = false
	cmd, exited := p.cmd, p.exited
	if cmd != nil {
		p.kills++
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	p.mu.Unlock()
	if exited != nil {
		<-exited
	}
	return nil
}

// Start starts the process again, on the same address, and returns once it answers.
func (c *Cluster) Start(ctx context.Context, name string) error {
	p := c.Proc(name)
	if p == nil {
		return fmt.Errorf("no process %q", name)
	}
	return c.startAndWait(ctx, p)
}

// Stop stops every process, Baton's first and the infrastructure last, each with SIGTERM
// and, after ten seconds, SIGKILL.
func (c *Cluster) Stop() {
	procs := slices.Clone(c.procs)
	slices.Reverse(procs)
	var wg sync.WaitGroup
	stop := func(p *Proc) {
		p.mu.Lock()
		p.want = false
		cmd, exited := p.cmd, p.exited
		if cmd != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		}
		p.mu.Unlock()
		if exited == nil {
			return
		}
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	for _, p := range procs {
		if p.AdminAddr != "" {
			wg.Go(func() { stop(p) })
		}
	}
	wg.Wait()
	for _, p := range procs {
		if p.AdminAddr == "" {
			stop(p)
		}
	}
	c.cancel()
	c.watchers.Wait()
}

func (c *Cluster) note(format string, args ...any) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	fmt.Fprintf(c.out, "%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// startAndWait starts p unless it runs and waits until it answers.
func (c *Cluster) startAndWait(ctx context.Context, p *Proc) error {
	if err := c.start(p); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, readyWithin)
	defer cancel()
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	// A process that exits while starting is waited for again as its restart comes up.
	readyErr := make(chan error, 1)
	go func() { readyErr <- p.ready(wctx) }()
	select {
	case err := <-readyErr:
		if err != nil {
			return fmt.Errorf("%s did not answer: %w (its log: %s)\n%s", p.Name, err, p.Log, tail(p.Log, 20))
		}
		return nil
	case <-exited:
		if err := <-readyErr; err != nil {
			return fmt.Errorf("%s exited while starting: %w (its log: %s)\n%s", p.Name, err, p.Log, tail(p.Log, 20))
		}
		return nil
	}
}

// start starts p unless it runs, and watches it.
func (c *Cluster) start(p *Proc) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.want = true
	if p.cmd != nil {
		return nil
	}
	return c.spawn(p)
}

// spawn starts p's command; p.mu is held.
func (c *Cluster) spawn(p *Proc) error {
	log, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(baseEnv(), p.env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = procAttr()
	fmt.Fprintf(log, "--- %s: starting %s\n", time.Now().Format(time.RFC3339Nano), p.Name)
	started := make(chan error, 1)
	exited := make(chan struct{})
	c.watchers.Go(func() {
		// Pdeathsig fires when the thread that forked the child exits: keep this goroutine
		// on its thread for the child's life.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(exited)
			return
		}
		started <- nil
		err := cmd.Wait()
		fmt.Fprintf(log, "--- %s: %s exited: %v\n", time.Now().Format(time.RFC3339Nano), p.Name, err)
		_ = log.Close()
		p.mu.Lock()
		p.cmd, p.exited = nil, nil
		unexpected := p.want
		if unexpected {
			p.failures++
		}
		p.mu.Unlock()
		close(exited)
		if unexpected {
			c.note("%s exited on its own (%v); starting it again in %s", p.Name, err, restartAfter)
			c.restartLater(p)
		}
	})
	if err := <-started; err != nil {
		_ = log.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	p.cmd, p.exited = cmd, exited
	p.starts++
	return nil
}

// restartLater starts p again after restartAfter, unless it was stopped meanwhile.
func (c *Cluster) restartLater(p *Proc) {
	c.watchers.Go(func() {
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(restartAfter):
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.want && p.cmd == nil && c.ctx.Err() == nil {
			if err := c.spawn(p); err != nil {
				c.note("%s: %v", p.Name, err)
			}
		}
	})
}

// baseEnv is the supervisor's environment without Baton's variables, which the cluster
// sets itself.
func baseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BATON_") {
			out = append(out, kv)
		}
	}
	return out
}

// loadOrCreateKey reads a key kept in path, or keeps a new random one there: a cluster
// started again on its run directory finds its data sealed and signed with the same keys.
func loadOrCreateKey(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err == nil && strings.TrimSpace(string(raw)) != "" {
		return strings.TrimSpace(string(raw)), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	key := hex.EncodeToString(b)
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return "", err
	}
	return key, nil
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	out := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// poll calls try every 50 ms until it succeeds or ctx ends, answering try's last error.
func poll(ctx context.Context, try func() error) error {
	var last error
	for {
		if last = try(); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func waitTCP(ctx context.Context, addr string) error {
	return poll(ctx, func() error {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
		}
		return err
	})
}

var probe = &http.Client{Timeout: 2 * time.Second}

func waitHTTP(ctx context.Context, url string) error {
	return poll(ctx, func() error {
		resp, err := probe.Get(url)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", url, resp.Status)
		}
		return nil
	})
}

// waitConsul waits for the agent to have elected itself leader: registrations need one.
func waitConsul(ctx context.Context, addr string) error {
	return poll(ctx, func() error {
		resp, err := probe.Get("http://" + addr + "/v1/status/leader")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		if strings.Trim(strings.TrimSpace(string(body)), `"`) == "" {
			return errors.New("no leader yet")
		}
		return nil
	})
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		lines = append(lines, s.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

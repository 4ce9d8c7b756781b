package testkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// consulAttempts is how often startConsulAgent tries fresh ports: the free ports it picks
// can be taken by someone else before the agent binds them.
const consulAttempts = 3

// startConsulAgent runs `consul agent -dev` on free loopback ports and waits for its
// leader. The agent keeps everything in memory.
func startConsulAgent(ctx context.Context) (string, func(), error) {
	bin, err := consulBinary()
	if err != nil {
		return "", nil, err
	}
	var errs []error
	for range consulAttempts {
		addr, stop, err := runConsulAgent(ctx, bin)
		if err == nil {
			return addr, stop, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return "", nil, errors.Join(errs...)
}

// consulBinary finds the consul binary: $BATON_CONSUL_BIN, else .tools/bin/consul in the
// repository root (the directory holding go.work).
func consulBinary() (string, error) {
	bin := os.Getenv(EnvConsulBin)
	if bin == "" {
		root, err := repoRoot()
		if err != nil {
			return "", fmt.Errorf("find consul binary: %w; run `make tools` or set %s", err, EnvConsulBin)
		}
		bin = filepath.Join(root, ".tools", "bin", "consul")
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("consul binary: %w; run `make tools` to build it (or set %s)", err, EnvConsulBin)
	}
	return bin, nil
}

// repoRoot walks up from the working directory (the package directory under go test) to
// the directory containing go.work.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work above the working directory")
		}
		dir = parent
	}
}

// runConsulAgent makes one attempt at starting the agent.
func runConsulAgent(ctx context.Context, bin string) (string, func(), error) {
	ports, err := freePorts(4)
	if err != nil {
		return "", nil, err
	}
	httpPort, serfLAN, serfWAN, serverPort := ports[0], ports[1], ports[2], ports[3]
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(httpPort))
	args := []string{
		"agent", "-dev",
		"-node", "testkit",
		"-bind", "127.0.0.1",
		"-client", "127.0.0.1",
		"-http-port", strconv.Itoa(httpPort),
		"-serf-lan-port", strconv.Itoa(serfLAN),
		"-serf-wan-port", strconv.Itoa(serfWAN),
		"-server-port", strconv.Itoa(serverPort),
		// Off: nothing uses them, and each would need another free port.
		"-dns-port", "-1",
		"-grpc-port", "-1",
		"-grpc-tls-port", "-1",
		"-log-level", "warn",
		// No internet here, and tests should not phone home anyway.
		"-hcl", "disable_update_check = true",
	}

	out := &tailBuffer{max: 16 << 10}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = dieWithParent()

	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		// Pdeathsig fires when the thread that forked the agent exits, not the process.
		// Keeping this goroutine on its thread until the agent exits pins that thread.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return "", nil, fmt.Errorf("start %s: %w", bin, err)
	}
	stop := func() {
		// Dev mode keeps its state in memory, so there is nothing to shut down gracefully.
		_ = cmd.Process.Kill()
		<-exited
	}

	// The HTTP port was free a moment ago, but another test binary's agent may have taken it
	// since: only a leader on our own server port shows the agent answering is ours.
	leader := net.JoinHostPort("127.0.0.1", strconv.Itoa(serverPort))
	if err := waitConsulLeader(ctx, addr, leader, exited); err != nil {
		stop()
		return "", nil, fmt.Errorf("consul %s: %w; output:\n%s", strings.Join(args, " "), err, out.String())
	}
	return addr, stop, nil
}

// waitConsulLeader polls /v1/status/leader until it names a leader (want, unless want is
// empty), the context ends, or exited (if not nil) is closed.
func waitConsulLeader(ctx context.Context, addr, want string, exited <-chan struct{}) error {
	client := &http.Client{Timeout: 2 * time.Second}
	url := "http://" + addr + "/v1/status/leader"
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		leader, err := consulLeader(ctx, client, url)
		switch {
		case err != nil && ctx.Err() != nil:
			// Cut off by the end of the wait: the answer before says more.
		case err != nil:
			last = err
		case leader != "" && (want == "" || leader == want):
			return nil
		case leader != "":
			last = fmt.Errorf("%s answers with leader %s, not this agent's %s", addr, leader, want)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no leader at %s (last error: %v): %w", addr, last, ctx.Err())
		case <-exited:
			return errors.New("agent exited before electing a leader")
		case <-tick.C:
		}
	}
}

// consulLeader returns the leader's address, "" while there is none.
func consulLeader(ctx context.Context, client *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", resp.Status, body)
	}
	// The body is a JSON string: `"127.0.0.1:8300"`, or `""` before the election.
	return strings.Trim(strings.TrimSpace(string(body)), `"`), nil
}

// freePorts returns n distinct loopback ports that were free a moment ago. They are held
// together so they differ, then released for the caller to bind.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		defer l.Close()
		port := l.Addr().(*net.TCPAddr).Port
		// Serf also listens on UDP on the same port; skip ports whose UDP side is taken.
		u, err := net.ListenPacket("udp", l.Addr().String())
		if err != nil {
			continue
		}
		defer u.Close()
		ports = append(ports, port)
	}
	return ports, nil
}

// tailBuffer keeps the last max bytes written to it, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

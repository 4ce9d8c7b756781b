package webtest_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/standalone"
)

// e2eTimeout bounds the whole Playwright run when the test has no deadline; with one
// (go test -timeout), Playwright stops a little before it, so that its report is printed.
const e2eTimeout = 15 * time.Minute

// TestBrowser runs every flow of web/e2e in Chromium against one fresh standalone instance,
// with BATON_URL and BATON_TOKEN (its admin token) in their environment, and fails with
// Playwright's report when any flow does. BATON_E2E_GREP runs only the flows whose titles
// match it. The OpenID Connect flow (e2e/oidc.spec.ts) needs an instance of its own and skips
// itself here; TestBrowserOIDC runs it.
func TestBrowser(t *testing.T) {
	env := prepare(t)
	b := start(t, nil)
	var args []string
	if grep := os.Getenv("BATON_E2E_GREP"); grep != "" {
		args = append(args, "--grep", grep)
	}
	playwright(t, env, b, args, nil)
}

// browserEnv is what running Playwright needs from this machine.
type browserEnv struct {
	chromium, npx, web string
}

// prepare skips the test unless BATON_WEB_TEST=1 and checks that Chromium, Node.js and the
// UI's packages are there.
func prepare(t *testing.T) browserEnv {
	t.Helper()
	if os.Getenv("BATON_WEB_TEST") != "1" {
		t.Skip("browser tests run with BATON_WEB_TEST=1 (make test)")
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	_, err := os.Stat(chromium)
	require.NoError(t, err, "the browser tests need Chromium (apt-get install -y chromium; make test installs it)")
	npx, err := exec.LookPath("npx")
	require.NoError(t, err, "the browser tests need Node.js and npm")
	web, err := filepath.Abs(filepath.Join("..", "..", "..", "web"))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(web, "node_modules", "@playwright", "test"))
	require.NoError(t, err, "the UI's packages are not installed: cd web && npm ci (make test does)")
	return browserEnv{chromium: chromium, npx: npx, web: web}
}

// playwright runs `playwright test` with args against b, with extra in the flows'
// environment, and fails with Playwright's report when any flow does.
func playwright(t *testing.T, env browserEnv, b *instance, args []string, extra map[string]string) {
	t.Helper()
	artifacts := os.Getenv("BATON_E2E_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(env.web, "e2e", "artifacts")
	}
	args = append([]string{"playwright", "test"}, args...)
	deadline := time.Now().Add(e2eTimeout)
	if d, ok := t.Deadline(); ok {
		deadline = d.Add(-30 * time.Second)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.npx, args...)
	cmd.Dir = env.web
	// npx starts Playwright, which starts workers and browsers: stop them all at the deadline.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = append(os.Environ(),
		"BATON_URL="+b.url,
		"BATON_TOKEN="+b.token,
		"BATON_E2E_ARTIFACTS="+artifacts,
		"CHROMIUM="+env.chromium,
		"CI=1",
		"NO_COLOR=1",
	)
	for k, v := range extra {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	t.Logf("screenshots of every step: %s", artifacts)
	require.NoError(t, err, "playwright:\n%s", out)
	t.Logf("playwright:\n%s", out)
}

// instance is the standalone process the browser talks to.
type instance struct {
	url   string // the gateway, without /api/v2
	token string // the admin token
}

var banner = regexp.MustCompile(`Baton is running at (http://\S+)/api/v2\nAdmin token: (\S+)`)

// start runs a fresh standalone instance as `make run` does, with extra variables, and waits
// for its banner. Rate limiting is off: one browser loading pages is many requests from one
// address.
func start(t *testing.T, extra map[string]string) *instance {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	vars := map[string]string{
		"BATON_DATA_DIR":     filepath.Join(t.TempDir(), ".baton"),
		"BATON_GATEWAY_ADDR": addr,
		"BATON_PUBLIC_URL":   "http://" + addr,
		"BATON_ADMIN_ADDR":   "127.0.0.1:0",
		"BATON_LOG_LEVEL":    "error",
		"BATON_RATE_LIMIT":   "0",
	}
	for k, v := range extra {
		vars[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- standalone.Run(ctx, func(k string) string { return vars[k] }, w)
		_ = w.Close()
	}()
	lines := make(chan string)
	go func() {
		s := bufio.NewScanner(r)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	var out strings.Builder
	deadline := time.After(2 * time.Minute)
	for !banner.MatchString(out.String()) {
		select {
		case line, ok := <-lines:
			if !ok {
				cancel()
				require.FailNow(t, "standalone stopped before serving", "%v", <-done)
			}
			out.WriteString(line + "\n")
		case err := <-done:
			cancel()
			require.FailNow(t, "standalone stopped before serving", "%v", err)
		case <-deadline:
			cancel()
			require.FailNow(t, "standalone did not start", "%s", out.String())
		}
	}
	go func() {
		for range lines {
		}
	}()
	m := banner.FindStringSubmatch(out.String())
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	return &instance{url: strings.TrimSuffix(m[1], "/api/v2"), token: m[2]}
}

package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/cli"
	"github.com/baton-flow/baton/gateway/internal/cli/config"
	"github.com/baton-flow/baton/gateway/internal/contract"
	"github.com/baton-flow/baton/libs/client"
	"github.com/baton-flow/baton/libs/golden"
	"github.com/baton-flow/baton/libs/testkit"
)

// TestMain runs the tests, each exchange of a command with a server checked against the
// published contract, and reports how many were.
func TestMain(m *testing.M) { testkit.Main(m, contract.Report) }

// server is a `baton server` started by a test, on free ports and its own data directory.
type server struct {
	url, token string
	// out is what the command printed up to its banner.
	out string
	dir string
}

var banner = regexp.MustCompile(`Baton is running at (http://\S+)/api/v2\nAdmin token: (\S+)\n`)

// startServer runs `baton server` until the test ends.
func startServer(t *testing.T) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan int, 1)
	var stderr bytes.Buffer
	dir := t.TempDir()
	go func() {
		done <- cli.Main(ctx, []string{"server", "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--data-dir", dir},
			cli.Env{Getenv: func(string) string { return "" }, Stdout: w, Stderr: &stderr})
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
		case l, ok := <-lines:
			require.True(t, ok, "baton server stopped before serving: %s", stderr.String())
			out.WriteString(l + "\n")
		case <-deadline:
			cancel()
			require.FailNow(t, "baton server did not start", out.String())
		}
	}
	go func() {
		for range lines { // whatever it prints later must not block it
		}
	}()
	t.Cleanup(func() {
		cancel()
		assert.Equal(t, 0, <-done, "baton server stops cleanly when interrupted")
	})
	m := banner.FindStringSubmatch(out.String())
	return &server{url: m[1], token: m[2], out: out.String(), dir: dir}
}

// baton runs one command with the config file path and the variables given, and returns
// its exit code, stdout and stderr.
func baton(t *testing.T, cfg string, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := map[string]string{config.EnvConfig: cfg}
	for k, v := range vars {
		env[k] = v
	}
	code := cli.Main(context.Background(), args, cli.Env{
		Getenv: func(k string) string { return env[k] }, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
		// The SDK's client, its exchanges checked against the contract.
		Connect: func(c config.Context) (*client.Client, error) {
			return client.New(c.Server, client.WithToken(c.Token), client.WithHTTPClient(contract.Client(t, nil)))
		},
	})
	return code, out.String(), errOut.String()
}

// normalizer replaces what changes from one run of a test to the next (ports, ids,
// times, durations, the token) so that outputs can be compared with golden files; runs
// of spaces become two, since the widths of what was replaced changed the alignment.
type normalizer struct{ replacer *strings.Replacer }

var normalizations = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<RUN>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "<TIME>"},
	{regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d  `), "<T>  "},
	{regexp.MustCompile(`\[\s*\d+\.\ds\]`), "[<T>]"},
	{regexp.MustCompile(`(just now|\bin \d+(ms|s|m\d\ds|h\d\dm|d\d\dh)\b|\b\d+(ms|s|m\d\ds|h\d\dm|d\d\dh) ago)`), "<AGE>"},
	{regexp.MustCompile(`\b\d+(ms|s|m\d\ds)\b`), "<DURATION>"},
	{regexp.MustCompile(`\(trace [0-9a-f]+\)`), "(trace <TRACE>)"},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "<ADDR>"},
	{regexp.MustCompile(`(\S) {2,}`), "$1  "},
	{regexp.MustCompile(`(?m)^ {3,}(\w)`), "  $1"},
}

func (n normalizer) apply(s string) string {
	if n.replacer != nil {
		s = n.replacer.Replace(s)
	}
	for _, r := range normalizations {
		s = r.re.ReplaceAllString(s, r.with)
	}
	return s
}

const helloFlow = `{"name":"hello","description":"Greets.","labels":{"tier":"demo"},
 "params":[{"name":"who","type":"text","default":"world"}],
 "tasks":[{"name":"start","type":"start"},
  {"name":"greet","type":"script","params":[{"name":"script","value":"echo hello $(params.who)"}],"dependencies":[{"taskRef":"start"}]},
  {"name":"check","type":"script","params":[{"name":"script","value":"echo checked"}],"dependencies":[{"taskRef":"start"}]},
  {"name":"end","type":"end","dependencies":[{"taskRef":"greet"},{"taskRef":"check"}]}]}`

const failFlow = `{"name":"broken","tasks":[{"name":"start","type":"start"},
  {"name":"boom","type":"script","params":[{"name":"script","value":"echo about to fail; exit 2"}],"dependencies":[{"taskRef":"start"}]},
  {"name":"end","type":"end","dependencies":[{"taskRef":"boom","executionCondition":"success"}]}]}`

const napFlow = `{"name":"nap","tasks":[{"name":"start","type":"start"},
  {"name":"nap","type":"sleep","params":[{"name":"duration","value":600000}],"dependencies":[{"taskRef":"start"}]},
  {"name":"end","type":"end","dependencies":[{"taskRef":"nap"}]}]}`

// createWorkflow creates a workflow in team, once the team has reached the workflows
// service (a team's creation reaches it as an event).
func createWorkflow(t *testing.T, c *client.Client, team, doc string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, err := c.CreateWorkflowJSON(context.Background(), team, []byte(doc))
		require.False(t, client.IsInvalid(err), "%v", err)
		return err == nil
	}, 30*time.Second, 20*time.Millisecond)
}

// ends keeps of a watched run's lines those that do not depend on when the run was read:
// its first line, each task's end (sorted: two tasks may end between two reads in either
// order) and the run's end, without durations.
func ends(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var tasks []string
	ended := regexp.MustCompile(` task \S+ (succeeded|failed|skipped|cancelled|timedout|invalid)\b`)
	for _, l := range lines[1 : len(lines)-1] {
		if ended.MatchString(l) {
			tasks = append(tasks, l)
		}
	}
	// Sorted by what follows each line's time.
	sort.Slice(tasks, func(i, j int) bool { return tasks[i][10:] < tasks[j][10:] })
	out = strings.Join(append(append([]string{lines[0]}, tasks...), lines[len(lines)-1]), "\n") + "\n"
	// Whether a structural task took a millisecond or none depends on the clock.
	return regexp.MustCompile(` \(\d+(ms|s)\)`).ReplaceAllString(out, "")
}

// TestCommandsAgainstAServer drives the commands against a `baton server`, from login to
// delete, and compares what they print with golden files.
func TestCommandsAgainstAServer(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	n := normalizer{replacer: strings.NewReplacer(srv.url, "<SERVER>", srv.token, "<TOKEN>", srv.dir, "<DATA DIR>")}
	golden.MatchText(t, "server", []byte(n.apply(srv.out)))

	ctx := context.Background()
	admin, err := client.New(srv.url, client.WithToken(srv.token))
	require.NoError(t, err)
	_, err = admin.CreateTeam(ctx, &client.TeamRequest{Name: "infra"})
	require.NoError(t, err)
	for _, doc := range []string{helloFlow, failFlow, napFlow} {
		createWorkflow(t, admin, "infra", doc)
	}

	cfgDir := t.TempDir()
	cfg := cfgDir + "/baton/config.yaml"
	n.replacer = strings.NewReplacer(srv.url, "<SERVER>", srv.token, "<TOKEN>", srv.dir, "<DATA DIR>", cfgDir, "<CONFIG DIR>")
	check := func(name string, wantCode int, vars map[string]string, args ...string) (string, string) {
		t.Helper()
		code, out, errOut := baton(t, cfg, vars, args...)
		assert.Equal(t, wantCode, code, "%s: exit code; stderr: %s", name, errOut)
		got := out + errOut
		if slices.Contains(args, "--watch") || slices.Contains(args, "watch") {
			got = ends(got)
		}
		golden.MatchText(t, name, []byte(n.apply(got)))
		return out, errOut
	}

	// Before login: say how to log in.
	check("no-server", 1, nil, "get", "workflows")
	check("login-refused", 1, nil, "login", "--server", srv.url, "--token", "not-a-token")
	check("login", 0, nil, "login", "--server", srv.url, "--token", srv.token, "--team", "infra")
	ci, err := admin.CreateToken(ctx, &client.TokenCreateRequest{Type: "global", Name: "ci", Permissions: []string{"**/read"}})
	require.NoError(t, err)
	n.replacer = strings.NewReplacer(srv.url, "<SERVER>", srv.token, "<TOKEN>", srv.dir, "<DATA DIR>", cfgDir, "<CONFIG DIR>", ci.ID, "<TOKEN ID>")
	check("login-staging", 0, nil, "login", "--context", "staging", "--server", srv.url, "--token", ci.Token)
	check("context-list", 0, nil, "context", "list")
	check("context-current", 0, nil, "context", "current")
	check("context-use", 0, nil, "context", "use", "default")

	check("get-workflows", 0, nil, "get", "workflows")
	check("get-workflows-wide", 0, nil, "get", "workflows", "-o", "wide")
	check("get-workflow-json", 0, nil, "get", "workflow", "hello", "-o", "json")
	check("describe-workflow", 0, nil, "describe", "workflow", "infra/hello")
	check("get-teams", 0, nil, "get", "teams")

	// A run watched where stdout is no terminal: a line a change, exit 0.
	out, _ := check("run-submit-watch", 0, nil, "run", "submit", "hello", "-p", "who=cli", "--watch")
	run := regexp.MustCompile(`run (\S+) of hello`).FindStringSubmatch(out)
	require.NotNil(t, run, out)
	check("run-logs", 0, nil, "run", "logs", run[1])
	check("run-logs-task", 0, nil, "run", "logs", run[1], "greet", "-f")
	check("describe-run", 0, nil, "describe", "run", run[1])

	// A failed run exits 3, and retried from its failure fails again.
	out, _ = check("run-submit-failed", 3, nil, "run", "submit", "broken", "--watch")
	failed := regexp.MustCompile(`run (\S+) of broken`).FindStringSubmatch(out)
	require.NotNil(t, failed, out)
	check("run-retry-failed", 3, nil, "run", "retry", failed[1], "--from-failure", "--watch")

	// A cancelled run exits 4.
	out, _ = check("run-submit", 0, nil, "run", "submit", "nap", "--start")
	napping := regexp.MustCompile(`Run (\S+) of`).FindStringSubmatch(out)
	require.NotNil(t, napping, out)
	require.Eventually(t, func() bool {
		r, err := admin.GetWorkflowRun(ctx, "infra", napping[1])
		if err != nil {
			return false
		}
		nap, ok := r.Task("nap")
		return ok && nap.Status == client.StatusWaiting
	}, time.Minute, 20*time.Millisecond, "the run sleeps")
	check("run-cancel", 0, nil, "run", "cancel", napping[1])
	check("run-watch-cancelled", 4, nil, "run", "watch", "infra/"+napping[1])
	check("run-list-cancelled", 0, nil, "run", "list", "nap", "--status", "cancelled")

	// Completion offers the server's workflows.
	check("complete-workflows", 0, nil, "__complete", "run", "submit", "")
	_, out, _ = baton(t, cfg, nil, "__complete", "run", "watch", "")
	assert.Contains(t, out, napping[1]+"\n", "completion offers the team's runs")

	// A refused token says how to log in again; the environment overrides the context.
	check("token-refused", 1, map[string]string{config.EnvToken: "not-a-token"}, "get", "workflows")
	check("get-tokens", 0, nil, "get", "tokens")
	check("delete-token", 0, nil, "delete", "token", ci.ID)
	// The gateway may take a few seconds to learn of a revocation.
	require.Eventually(t, func() bool {
		code, _, _ := baton(t, cfg, nil, "--context", "staging", "get", "workflows", "--team", "infra")
		return code == 1
	}, 30*time.Second, 100*time.Millisecond, "a revoked token is refused")
	check("token-refused-context", 1, nil, "--context", "staging", "get", "workflows", "--team", "infra")
	check("unknown-context", 1, nil, "--context", "nowhere", "get", "workflows")
	check("unreachable", 1, map[string]string{config.EnvServer: "http://127.0.0.1:1"}, "get", "workflows")
	check("login-unreachable", 1, nil, "login", "--server", "http://127.0.0.1:1", "--token", "t")

	check("delete-workflow", 0, nil, "delete", "workflow", "hello")
	check("get-workflow-deleted", 1, nil, "get", "workflow", "hello")
	check("context-delete", 0, nil, "context", "delete", "staging")
}

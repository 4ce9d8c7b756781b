package doctest_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/doctest"
	"github.com/baton-flow/baton/gateway/internal/standalone"
)

func TestBlocks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give string
		want []doctest.Block
	}{
		{name: "none", give: "# Title\n\ntext\n"},
		{
			name: "shell blocks in order, others left out",
			give: "a\n```sh\necho 1\n```\n```json\n{}\n```\n```bash\necho 2\necho 3\n```\n",
			want: []doctest.Block{{Line: 2, Code: "echo 1\n"}, {Line: 8, Code: "echo 2\necho 3\n"}},
		},
		{
			name: "skip marked",
			give: "```sh skip\nmake run\n```\n```sh\necho ok\n```\n",
			want: []doctest.Block{{Line: 1, Code: "make run\n", Skip: true}, {Line: 4, Code: "echo ok\n"}},
		},
		{
			name: "a longer fence holds a shorter one",
			give: "````sh\ncat <<'EOF'\n```\nEOF\n````\n",
			want: []doctest.Block{{Line: 1, Code: "cat <<'EOF'\n```\nEOF\n"}},
		},
		{
			name: "a shell fence inside another language's block is text",
			give: "```markdown\n```sh\necho no\n```\n",
		},
		{
			name: "tildes and an indented fence",
			give: "  ~~~shell\n  echo hi\n  ~~~\n",
			want: []doctest.Block{{Line: 1, Code: "  echo hi\n"}},
		},
		{
			name: "inline code is no fence",
			give: "```sh` not a fence\n```sh\ntrue\n```\n",
			want: []doctest.Block{{Line: 2, Code: "true\n"}},
		},
		{name: "an empty block", give: "```sh\n```\n", want: []doctest.Block{{Line: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, doctest.Blocks([]byte(tt.give)))
		})
	}
}

// TestExamples runs the shell examples of README.md and of every file of docs/, each
// file's in one bash session in reading order, against one fresh standalone instance,
// with the environment a reader has after the quick start: BATON_URL and BATON_TOKEN.
// A command that fails fails the test with its block, what the block printed and its
// exit status.
func TestExamples(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "jq"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "the examples need %s (make tools installs it)", tool)
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	files := []string{filepath.Join(root, "README.md")}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	sort.Strings(docs)
	files = append(files, docs...)

	b := start(t)
	for _, file := range files {
		name, err := filepath.Rel(root, file)
		require.NoError(t, err)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			md, err := os.ReadFile(file)
			require.NoError(t, err)
			runFile(t, b, name, doctest.Blocks(md))
		})
	}
}

// fileTimeout bounds one file's examples; they wait on runs, none for long.
const fileTimeout = 5 * time.Minute

// runFile runs blocks in one bash session, in a directory of their own.
func runFile(t *testing.T, b *instance, name string, blocks []doctest.Block) {
	dir := t.TempDir()
	status := filepath.Join(dir, "status")
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	// The block that was running, and how the shell ended.
	fmt.Fprintf(&script, "trap 's=$?; echo \"$__doc_block $s\" > %q' EXIT\n", status)
	ran := 0
	for i, blk := range blocks {
		if blk.Skip {
			continue
		}
		ran++
		fmt.Fprintf(&script, "__doc_block=%d\nexec >%q 2>&1\n%s\n", i, outFile(dir, i), blk.Code)
	}
	script.WriteString("__doc_block=-1\n")
	path := filepath.Join(dir, "examples.sh")
	require.NoError(t, os.WriteFile(path, []byte(script.String()), 0o600))

	ctx, cancel := context.WithTimeout(context.Background(), fileTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", path)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BATON_URL="+b.url, "BATON_TOKEN="+b.token)
	cmd.WaitDelay = 5 * time.Second
	shellOut, runErr := cmd.CombinedOutput()

	raw, err := os.ReadFile(status)
	require.NoError(t, err, "the shell ended before its first block (%v): %s", runErr, shellOut)
	fields := strings.Fields(string(raw))
	require.Len(t, fields, 2, "status %q", raw)
	at, err := strconv.Atoi(fields[0])
	require.NoError(t, err)
	if at < 0 && runErr == nil {
		t.Logf("%s: %d examples ran, %d skipped", name, ran, len(blocks)-ran)
		return
	}
	require.GreaterOrEqual(t, at, 0, "%s: the shell failed after its last block: %v", name, runErr)
	blk := blocks[at]
	out, _ := os.ReadFile(outFile(dir, at))
	if ctx.Err() != nil {
		fields[1] = "killed after " + fileTimeout.String()
	}
	t.Fatalf("%s:%d: the example failed (exit status %s)\n--- example\n%s--- output\n%s", name, blk.Line, fields[1], blk.Code, out)
}

func outFile(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("out.%d", i)) }

// instance is the standalone process the examples call.
type instance struct {
	// url is the gateway's base URL, without /api/v2, as a reader's BATON_URL.
	url   string
	token string
}

var banner = regexp.MustCompile(`Baton is running at (http://\S+)/api/v2\nAdmin token: (\S+)`)

// start runs a fresh standalone instance as `make run` does, with BATON_PUBLIC_URL set
// as the quick start sets it, and waits for its banner.
func start(t *testing.T) *instance {
	t.Helper()
	// The public URL is the gateway's own, so the gateway's port is chosen first.
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
			require.FailNow(t, "standalone did not start")
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

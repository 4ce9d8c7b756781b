//go:build linux

package executor

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResultWrapper runs the wrapper a step with results gets, with its workspace moved
// to a temporary directory, and reads its output as the Kubernetes executor does.
func TestResultWrapper(t *testing.T) {
	t.Parallel()
	require.Contains(t, resultWrapper, "head -c "+strconv.Itoa(MaxResultSize+3)+" ", "the wrapper reads what the runner takes")
	tests := []struct {
		name        string
		script      string
		wantCode    int
		wantLog     string
		wantResults map[string]string
		wantErr     string
	}{
		{
			name:     "results and exit code",
			script:   `echo building; printf '1.2.3\n' > "$R/version"; printf 'a b\nc' > "$R/notes"; echo undeclared > "$R/other"; printf 'no newline'; exit 3`,
			wantCode: 3, wantLog: "building\nno newline",
			wantResults: map[string]string{"version": "1.2.3", "notes": "a b\nc"},
		},
		{name: "none written", script: `echo quiet`, wantLog: "quiet\n"},
		{
			name:    "too large",
			script:  `head -c 70000 /dev/zero | tr '\0' x > "$R/version"`,
			wantErr: "result version: is larger than 64 KiB",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			wrapper := strings.ReplaceAll(resultWrapper, containerWorkspace, ws)
			marker, err := newMarker()
			require.NoError(t, err)
			cmd := exec.Command(DefaultShell, "-c", wrapper, "baton-step", marker, DefaultShell, "-c", tt.script)
			cmd.Env = []string{"R=" + filepath.Join(ws, "results"), "PATH=/usr/bin:/bin"}
			raw, err := cmd.Output()
			var exit *exec.ExitError
			if tt.wantCode != 0 {
				require.ErrorAs(t, err, &exit)
				assert.Equal(t, tt.wantCode, exit.ExitCode())
			} else {
				require.NoError(t, err)
			}
			var log bytes.Buffer
			lr := &logReader{out: &log, marker: marker, want: []string{"version", "notes"}}
			require.NoError(t, lr.read(bytes.NewReader(raw)))
			assert.Equal(t, tt.wantLog, log.String())
			assert.Equal(t, tt.wantResults, lr.results)
			if tt.wantErr != "" {
				assert.EqualError(t, lr.err, tt.wantErr)
			} else {
				assert.NoError(t, lr.err)
			}
		})
	}
}

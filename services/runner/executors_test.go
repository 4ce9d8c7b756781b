package runner

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/runner/internal/executor"
)

func TestExecutors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sock := filepath.Join(dir, "docker.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))

	image := events.TaskSpec{Image: "alpine", Script: "true"}
	tests := []struct {
		name       string
		socket     string
		spec       events.TaskSpec
		wantDocker bool
	}{
		{name: "image and engine", socket: sock, spec: image, wantDocker: true},
		{name: "no image", socket: sock, spec: events.TaskSpec{Script: "true"}},
		{name: "docker off", socket: "", spec: image},
		{name: "no engine", socket: filepath.Join(dir, "missing.sock"), spec: image},
		{name: "not a socket", socket: file, spec: image},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, isDocker := executors(tt.socket, nil, nil)(tt.spec).(*executor.Docker)
			assert.Equal(t, tt.wantDocker, isDocker)
		})
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		want    int
		wantErr bool
	}{
		{give: "1", want: 1},
		{give: "10MiB", want: 10 << 20},
		{give: "3 KiB", want: 3 << 10},
		{give: "1GiB", want: 1 << 30},
		{give: "0", wantErr: true},
		{give: "-1KiB", wantErr: true},
		{give: "MiB", wantErr: true},
		{give: "2048GiB", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			got, err := parseSize(tt.give)
			assert.Equal(t, tt.wantErr, err != nil, "err: %v", err)
			assert.Equal(t, tt.want, got)
		})
	}
}

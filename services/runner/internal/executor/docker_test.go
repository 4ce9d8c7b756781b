//go:build linux

package executor

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
)

// engine is a fake Docker Engine: it records what it is asked and "runs" a container by
// writing frames and results as configured.
type engine struct {
	missingImage bool
	frames       []string // stdout, stderr, stdout, …
	result       string   // written to results/out
	exitCode     int
	hold         bool // keep the container running until killed

	mu     sync.Mutex
	config containerConfig
	calls  []string
	killed chan struct{}
}

func (e *engine) serve(t *testing.T) string {
	t.Helper()
	e.killed = make(chan struct{})
	sock := filepath.Join(t.TempDir(), "docker.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(e.handle)}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return sock
}

func (e *engine) handle(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.calls = append(e.calls, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	e.mu.Unlock()
	switch {
	case r.URL.Path == "/containers/create" && e.missingImage:
		e.missingImage = false
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"No such image"}`))
	case r.URL.Path == "/containers/create":
		e.mu.Lock()
		_ = json.NewDecoder(r.Body).Decode(&e.config)
		e.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"Id":"c1"}`))
	case r.URL.Path == "/images/create":
		_, _ = w.Write([]byte("{\"status\":\"Pulling\"}\n{\"status\":\"Done\"}\n"))
	case r.URL.Path == "/containers/c1/logs":
		if e.result != "" {
			host := strings.TrimSuffix(e.config.HostConfig.Binds[0], ":/workspace")
			_ = os.WriteFile(filepath.Join(host, "results", "out"), []byte(e.result), 0o644)
		}
		for i, f := range e.frames {
			hdr := make([]byte, 8)
			hdr[0] = byte(1 + i%2)
			binary.BigEndian.PutUint32(hdr[4:], uint32(len(f)))
			_, _ = w.Write(append(hdr, f...))
		}
		w.(http.Flusher).Flush()
		if e.hold {
			<-e.killed
		}
	case r.URL.Path == "/containers/c1/kill":
		close(e.killed)
		w.WriteHeader(http.StatusNoContent)
	case r.URL.Path == "/containers/c1/wait":
		_ = json.NewEncoder(w).Encode(map[string]int{"StatusCode": e.exitCode})
	default: // start, delete
		w.WriteHeader(http.StatusNoContent)
	}
}

func (e *engine) seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.calls...)
}

func TestDockerFakeEngine(t *testing.T) {
	t.Parallel()
	e := &engine{missingImage: true, frames: []string{"hello\n", "oops\n"}, result: "42\n", exitCode: 3}
	d := NewDocker(e.serve(t))
	out := newOutput()
	dir := filepath.Join(t.TempDir(), "run-1")
	step := Step{Dir: dir, Results: []string{"out"}, Spec: events.TaskSpec{
		Image: "alpine", Script: "echo $(results.out.path)", WorkingDir: "src",
		Env: []events.EnvVar{{Name: "A", Value: "$(results.out.path)"}},
	}}

	got := d.Execute(t.Context(), step, out)

	assert.Equal(t, Outcome{Status: StatusFailed, ExitCode: code(3), Message: "exit code 3", Results: map[string]string{"out": "42"}}, got)
	assert.Equal(t, "pulling image alpine\nhello\noops\n", out.String())
	assert.Equal(t, containerConfig{
		Image:      "alpine",
		Entrypoint: []string{"/bin/sh", "/workspace/.baton/script"},
		Env:        []string{"A=/workspace/results/out"},
		WorkingDir: "/workspace/src",
		Labels:     map[string]string{"io.baton.runner": "true"},
		HostConfig: struct {
			Binds []string `json:"Binds"`
		}{Binds: []string{dir + ":/workspace"}},
	}, e.config)
	assert.Equal(t, []string{
		"POST /containers/create?",
		"POST /images/create?fromImage=alpine&tag=latest",
		"POST /containers/create?",
		"POST /containers/c1/start?",
		"GET /containers/c1/logs?follow=1&stderr=1&stdout=1",
		"POST /containers/c1/wait?",
		"DELETE /containers/c1?force=1&v=1",
	}, e.seen())
	_, err := os.Stat(dir)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestDockerCommandConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		spec           events.TaskSpec
		wantEntrypoint []string
		wantCmd        []string
	}{
		{name: "command and args", spec: events.TaskSpec{Command: []string{"make"}, Args: []string{"test"}}, wantEntrypoint: []string{"make"}, wantCmd: []string{"test"}},
		{name: "args only keep the image's entrypoint", spec: events.TaskSpec{Args: []string{"--version"}}, wantCmd: []string{"--version"}},
		{name: "shebang script", spec: events.TaskSpec{Script: "#!/usr/bin/env python3\nprint(1)"}, wantEntrypoint: []string{"/workspace/.baton/script"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, err := newWorkspace(Step{Dir: t.TempDir()})
			require.NoError(t, err)
			cfg, err := (&Docker{}).config(ws, Step{Spec: tt.spec})
			require.NoError(t, err)
			assert.Equal(t, tt.wantEntrypoint, cfg.Entrypoint)
			assert.Equal(t, tt.wantCmd, cfg.Cmd)
			assert.Equal(t, "/workspace", cfg.WorkingDir)
		})
	}
}

func TestDockerCancelKillsTheContainer(t *testing.T) {
	t.Parallel()
	e := &engine{frames: []string{"started\n"}, hold: true, exitCode: 137}
	d := NewDocker(e.serve(t))
	ctx, cancel := context.WithCancelCause(t.Context())
	out := newOutput()
	done := make(chan Outcome, 1)
	go func() {
		done <- d.Execute(ctx, Step{Dir: filepath.Join(t.TempDir(), "run-1"), Spec: events.TaskSpec{Image: "alpine:3", Command: []string{"sleep", "600"}}}, out)
	}()
	out.waitFor(t, "started")
	cancel(ErrCancelled)
	assert.Equal(t, Outcome{Status: StatusCancelled, Message: "cancelled"}, <-done)
	assert.Contains(t, e.seen(), "POST /containers/c1/kill?")
	assert.Contains(t, e.seen(), "DELETE /containers/c1?force=1&v=1")
}

func TestDemux(t *testing.T) {
	t.Parallel()
	frame := func(stream byte, s string) string {
		hdr := make([]byte, 8)
		hdr[0] = stream
		binary.BigEndian.PutUint32(hdr[4:], uint32(len(s)))
		return string(hdr) + s
	}
	tests := []struct {
		name, give, want string
		wantErr          bool
	}{
		{name: "empty", give: "", want: ""},
		{name: "frames", give: frame(1, "a\n") + frame(2, "b") + frame(1, "c\n"), want: "a\nbc\n"},
		{name: "truncated frame", give: frame(1, "abc")[:9], want: "a", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			err := demux(strings.NewReader(tt.give), &out)
			assert.Equal(t, tt.wantErr, err != nil, "err: %v", err)
			assert.Equal(t, tt.want, out.String())
		})
	}
}

// TestDockerEngine runs a container on the real engine, when there is one.
func TestDockerEngine(t *testing.T) {
	t.Parallel()
	const socket = "/var/run/docker.sock"
	if _, err := os.Stat(socket); err != nil {
		t.Skip("no Docker engine at " + socket)
	}
	out := newOutput()
	step := Step{Dir: filepath.Join(t.TempDir(), "run-1"), Results: []string{"r"}, Spec: events.TaskSpec{
		Image: "alpine:3", Script: "echo hello; echo -n value > $(results.r.path)",
	}}
	got := NewDocker(socket).Execute(t.Context(), step, out)
	assert.Equal(t, Outcome{Status: StatusSucceeded, ExitCode: code(0), Results: map[string]string{"r": "value"}}, got, out.String())
	out.waitFor(t, "hello\n")
}

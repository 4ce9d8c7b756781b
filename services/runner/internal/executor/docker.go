package executor

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"
)

// containerWorkspace is where a container sees the attempt's workspace.
const containerWorkspace = "/workspace"

// dockerCallTimeout bounds the Docker API calls that do not wait on the step.
const dockerCallTimeout = 30 * time.Second

// Docker runs steps in containers through the Docker Engine API on a unix socket. The
// attempt's workspace is bind-mounted at /workspace (results at /workspace/results), so
// the runner's work directory must have the same path on the Docker host.
type Docker struct {
	// short makes the calls that answer at once; stream those that last as long as the
	// step (logs, wait) or a pull.
	short, stream *http.Client
	// Logger reports what only an operator can fix; nil means slog.Default().
	Logger *slog.Logger
}

// NewDocker returns a Docker executor talking to the engine at socket.
func NewDocker(socket string) *Docker {
	dialer := &net.Dialer{}
	t := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, "unix", socket)
	}}
	return &Docker{short: &http.Client{Transport: t, Timeout: dockerCallTimeout}, stream: &http.Client{Transport: t}}
}

type containerConfig struct {
	Image      string            `json:"Image"`
	Entrypoint []string          `json:"Entrypoint,omitempty"`
	Cmd        []string          `json:"Cmd,omitempty"`
	Env        []string          `json:"Env,omitempty"`
	WorkingDir string            `json:"WorkingDir"`
	Labels     map[string]string `json:"Labels,omitempty"`
	HostConfig struct {
		Binds []string `json:"Binds"`
	} `json:"HostConfig"`
}

// Execute implements Executor.
func (d *Docker) Execute(ctx context.Context, step Step, out io.Writer) Outcome {
	ws, err := newWorkspace(step)
	if err != nil {
		return failed(err)
	}
	defer ws.remove(d.Logger)
	// The image's user need not be the runner's.
	for _, dir := range []string{ws.dir, ws.results} {
		if err := os.Chmod(dir, 0o777); err != nil {
			return failed(fmt.Errorf("prepare workspace: %w", err))
		}
	}
	cfg, err := d.config(ws, step)
	if err != nil {
		return failed(err)
	}
	id, err := d.create(ctx, cfg, out)
	if err != nil {
		if ctx.Err() != nil {
			return stopped(ctx)
		}
		return failed(err)
	}
	bg := context.WithoutCancel(ctx)
	defer func() {
		if err := d.call(bg, http.MethodDelete, "/containers/"+id, url.Values{"force": {"1"}, "v": {"1"}}, nil, nil); err != nil {
			cmp.Or(d.Logger, slog.Default()).Warn("remove container", "container", id, "err", err)
		}
	}()
	stopKill := context.AfterFunc(ctx, func() {
		_ = d.call(bg, http.MethodPost, "/containers/"+id+"/kill", nil, nil, nil)
	})
	defer stopKill()
	if err := d.call(ctx, http.MethodPost, "/containers/"+id+"/start", nil, nil, nil); err != nil {
		if ctx.Err() != nil {
			return stopped(ctx)
		}
		return failed(fmt.Errorf("start container: %w", err))
	}
	// The log stream ends when the container does, killed or not.
	if err := d.logs(bg, id, out); err != nil {
		fmt.Fprintf(out, "[runner: container log stream broke: %v]\n", err)
	}
	var wait struct {
		StatusCode int
		Error      *struct{ Message string }
	}
	if err := d.decode(bg, d.stream, http.MethodPost, "/containers/"+id+"/wait", nil, nil, &wait); err != nil {
		return failed(fmt.Errorf("wait for container: %w", err))
	}
	if ctx.Err() != nil {
		return stopped(ctx)
	}
	if wait.Error != nil && wait.Error.Message != "" {
		return failed(fmt.Errorf("container: %s", wait.Error.Message))
	}
	return ws.finish(exitedWith(wait.StatusCode), step.Results)
}

func (d *Docker) config(ws workspace, step Step) (containerConfig, error) {
	spec := substitute(step.Spec, step.Results, containerWorkspace+"/results")
	cfg := containerConfig{Image: spec.Image, Labels: map[string]string{"io.baton.runner": "true"}}
	switch {
	case spec.Script != "":
		name, err := ws.writeScript(spec.Script)
		if err != nil {
			return cfg, err
		}
		script := path.Join(containerWorkspace, ".baton", name)
		if strings.HasPrefix(spec.Script, "#!") {
			cfg.Entrypoint = []string{script}
		} else {
			cfg.Entrypoint = append(strings.Fields(cmp.Or(spec.Shell, DefaultShell)), script)
		}
	case len(spec.Command) > 0:
		// An entrypoint given, the engine drops the image's Cmd as well.
		cfg.Entrypoint, cfg.Cmd = spec.Command, spec.Args
	default:
		cfg.Cmd = spec.Args
	}
	dir, err := ws.workingDir(spec.WorkingDir, containerWorkspace)
	if err != nil {
		return cfg, err
	}
	cfg.WorkingDir = dir
	for _, e := range spec.Env {
		cfg.Env = append(cfg.Env, e.Name+"="+e.Value)
	}
	cfg.HostConfig.Binds = []string{ws.dir + ":" + containerWorkspace}
	return cfg, nil
}

// create creates the container, pulling its image when the engine does not have it.
func (d *Docker) create(ctx context.Context, cfg containerConfig, out io.Writer) (string, error) {
	var created struct {
		ID string `json:"Id"`
	}
	err := d.call(ctx, http.MethodPost, "/containers/create", nil, cfg, &created)
	var se *statusError
	if errors.As(err, &se) && se.status == http.StatusNotFound {
		fmt.Fprintf(out, "pulling image %s\n", cfg.Image)
		if err := d.pull(ctx, cfg.Image); err != nil {
			return "", err
		}
		err = d.call(ctx, http.MethodPost, "/containers/create", nil, cfg, &created)
	}
	if err != nil {
		return "", fmt.Errorf("create container: %w", err)
	}
	return created.ID, nil
}

func (d *Docker) pull(ctx context.Context, image string) error {
	q := url.Values{"fromImage": {image}}
	// Without a tag the engine would pull every tag of the repository.
	if last := path.Base(image); !strings.Contains(last, ":") && !strings.Contains(image, "@") {
		q.Set("tag", "latest")
	}
	resp, err := d.do(ctx, d.stream, http.MethodPost, "/images/create", q, nil)
	if err != nil {
		return fmt.Errorf("pull %s: %w", image, err)
	}
	defer resp.Body.Close()
	// Progress is a JSON stream that reports failure in-band.
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var msg struct{ Error string }
		if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.Error != "" {
			return fmt.Errorf("pull %s: %s", image, msg.Error)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("pull %s: %w", image, err)
	}
	return nil
}

func (d *Docker) logs(ctx context.Context, id string, out io.Writer) error {
	q := url.Values{"follow": {"1"}, "stdout": {"1"}, "stderr": {"1"}}
	resp, err := d.do(ctx, d.stream, http.MethodGet, "/containers/"+id+"/logs", q, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return demux(resp.Body, out)
}

// demux copies the payload of the engine's multiplexed stream (frames of an 8-byte
// header, whose last 4 bytes are the big-endian size, then the payload) to out.
func demux(r io.Reader, out io.Writer) error {
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if _, err := io.CopyN(out, r, int64(binary.BigEndian.Uint32(hdr[4:]))); err != nil {
			return err
		}
	}
}

type statusError struct {
	status  int
	message string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("docker engine: %d %s", e.status, e.message)
}

// call makes one API call that answers at once; out, when set, receives the answer.
func (d *Docker) call(ctx context.Context, method, p string, q url.Values, in, out any) error {
	return d.decode(ctx, d.short, method, p, q, in, out)
}

func (d *Docker) decode(ctx context.Context, c *http.Client, method, p string, q url.Values, in, out any) error {
	resp, err := d.do(ctx, c, method, p, q, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("decode %s %s answer: %w", method, p, err)
		}
	}
	return nil
}

// do sends a request and returns a 2xx answer; any other is a *statusError.
func (d *Docker) do(ctx context.Context, c *http.Client, method, p string, q url.Values, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	u := "http://docker" + p
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		var msg struct{ Message string }
		_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&msg)
		return nil, &statusError{status: resp.StatusCode, message: msg.Message}
	}
	return resp, nil
}

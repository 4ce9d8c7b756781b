package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/telemetry"
)

func TestLoadEnv(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		"BATON_KAFKA_BROKERS": "a:9092, b:9092,",
		"BATON_SERVICE_URLS":  "identity=http://identity:8080/,runs=http://r1:8080,runs=http://r2:8080",
		"BATON_LOG_LEVEL":     "debug",
	}
	env, err := host.LoadEnv(func(k string) string { return vars[k] })
	require.NoError(t, err)
	assert.Equal(t, []string{"a:9092", "b:9092"}, env.KafkaBrokers)
	assert.Equal(t, map[string][]string{"identity": {"http://identity:8080"}, "runs": {"http://r1:8080", "http://r2:8080"}}, env.ServiceURLs)
	assert.Equal(t, slog.LevelDebug, env.LogLevel)
	assert.Equal(t, "0.0.0.0:8080", env.HTTPAddr)
	assert.Equal(t, "0.0.0.0:8081", env.AdminAddr, "metrics have a port of their own")
	assert.Equal(t, "baton.", env.TopicPrefix)
	assert.Equal(t, "baton_", env.MongoDBPrefix)
	assert.Equal(t, 20*time.Second, env.ShutdownTimeout)

	tests := []struct{ name, key, value string }{
		{"bad level", "BATON_LOG_LEVEL", "loud"},
		{"bad timeout", "BATON_SHUTDOWN_TIMEOUT", "soon"},
		{"bad service urls", "BATON_SERVICE_URLS", "identity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := host.LoadEnv(func(k string) string {
				if k == tt.key {
					return tt.value
				}
				return ""
			})
			assert.Error(t, err)
		})
	}
}

// slowService answers /slow only when released, to prove shutdown drains requests, and
// records that its background work was stopped.
type slowService struct {
	release chan struct{}
	started chan struct{}
	stopped chan struct{}
}

func (s *slowService) Routes(r fiber.Router) {
	r.Get("/slow", func(c *fiber.Ctx) error {
		close(s.started)
		<-s.release
		return c.SendString("done")
	})
}

func (s *slowService) Run(ctx context.Context) error {
	<-ctx.Done()
	close(s.stopped)
	return nil
}

func TestFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw     string
		want    bool
		wantErr bool
	}{
		{raw: "", want: false},
		{raw: "false", want: false},
		{raw: "true", want: true},
		{raw: " true ", want: true},
		{raw: "yes", wantErr: true},
		{raw: "TRUE", wantErr: true},
		{raw: "1", wantErr: true},
	}
	for _, tt := range tests {
		got, err := host.Flag(func(string) string { return tt.raw }, "BATON_X_ALONE")
		if tt.wantErr {
			assert.ErrorContains(t, err, "BATON_X_ALONE", "%q", tt.raw)
			continue
		}
		assert.NoError(t, err, "%q", tt.raw)
		assert.Equal(t, tt.want, got, "%q", tt.raw)
	}
}

func TestServeProbesRegistersAndDrains(t *testing.T) {
	t.Parallel()
	static := registry.NewStatic(nil)
	p := &host.Platform{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Static: static, Resolver: static}
	svc := &slowService{release: make(chan struct{}), started: make(chan struct{}), stopped: make(chan struct{})}
	var down atomic.Bool
	serving := make(chan net.Addr, 1)
	unit := host.Unit{
		Name: "slow", Service: svc, Addr: "127.0.0.1:0", Discoverable: true,
		Checks: map[string]func(context.Context) error{"db": func(context.Context) error {
			if down.Load() {
				return errors.New("unreachable")
			}
			return nil
		}},
		OnServing: func(a net.Addr) { serving <- a },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- host.Serve(ctx, p, unit) }()

	addr := (<-serving).String()
	urls, err := static.Resolve(ctx, "slow")
	require.NoError(t, err)
	assert.Equal(t, []string{"http://" + addr}, urls)

	get := func(path string) (int, map[string]any) {
		resp, err := http.Get("http://" + addr + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	code, _ := get("/health")
	assert.Equal(t, http.StatusOK, code)
	code, _ = get("/ready")
	assert.Equal(t, http.StatusOK, code)
	down.Store(true)
	code, body := get("/ready")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "DOWN", body["status"])
	down.Store(false)
	code, body = get("/nowhere")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "ROUTE_NOT_FOUND", body["reason"])

	// A request in flight when shutdown starts still gets its answer.
	inflight := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/slow")
		if err != nil {
			inflight <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		inflight <- string(b)
	}()
	<-svc.started
	cancel()
	// Deregistration comes first, before the drain finishes.
	require.Eventually(t, func() bool {
		_, err := static.Resolve(context.Background(), "slow")
		return errors.Is(err, registry.ErrNoInstance)
	}, 5*time.Second, 5*time.Millisecond)
	close(svc.release)
	assert.Equal(t, "done", <-inflight)
	require.NoError(t, <-done)
	<-svc.stopped
}

// /metrics is served on the operators' listener (BATON_ADMIN_ADDR) only, never on a unit's
// port: a gateway's unit port is the public one.
func TestServeMetricsOnTheAdminListenerOnly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	tel, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "metrics-test"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	static := registry.NewStatic(nil)
	p := &host.Platform{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Static: static, Resolver: static,
		Telemetry: tel, Env: host.Env{AdminAddr: "127.0.0.1:0"}}
	svc := &slowService{release: make(chan struct{}), started: make(chan struct{}), stopped: make(chan struct{})}
	serving := make(chan net.Addr, 1)
	unit := host.Unit{Name: "public", Service: svc, Addr: "127.0.0.1:0", OnServing: func(a net.Addr) { serving <- a }}
	done := make(chan error, 1)
	go func() { done <- host.Serve(ctx, p, unit) }()
	public := (<-serving).String()
	admin := p.AdminAddr()
	require.NotEmpty(t, admin)
	require.NotEqual(t, public, admin)

	get := func(addr, path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		name, addr, path string
		want             int
	}{
		{"metrics on the unit's port", public, "/metrics", http.StatusNotFound},
		{"health on the unit's port", public, "/health", http.StatusOK},
		{"metrics for operators", admin, "/metrics", http.StatusOK},
		{"nothing else for operators", admin, "/api/v2/team", http.StatusNotFound},
	}
	for _, tt := range tests {
		code, body := get(tt.addr, tt.path)
		assert.Equal(t, tt.want, code, "%s: %s", tt.name, body)
		if tt.want == http.StatusOK && tt.path == "/metrics" {
			assert.Contains(t, body, "# TYPE", "Prometheus text")
		}
	}
	cancel()
	require.NoError(t, <-done)
	_, err = http.Get("http://" + admin + "/metrics")
	assert.Error(t, err, "the operators' listener stops with the process")
}

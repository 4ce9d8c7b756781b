// Package runner is Baton's runner: it executes the task runs it receives from Kafka and reports back. It owns no data.
package runner

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/metric"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/runner/internal/executor"
	"github.com/baton-flow/baton/services/runner/internal/leases"
	"github.com/baton-flow/baton/services/runner/internal/worker"
)

// Name is the service's name in discovery.
const Name = "runner"

// Configuration defaults.
const (
	DefaultConcurrency  = 8
	DefaultHeartbeat    = 5 * time.Second
	DefaultMaxLog       = 10 << 20
	DefaultDockerSocket = "/var/run/docker.sock"
)

// Config is the service's own configuration. New takes a zero field as its default, except
// DockerSocket.
type Config struct {
	// GroupID is the consumer group the replicas share on the dispatch topic; default
	// "baton-runner".
	GroupID string
	// ID names this runner instance to the runs service and in its reports
	// (BATON_RUNNER_ID; default the host name and a random suffix).
	ID string
	// Concurrency is how many attempts run at once (BATON_RUNNER_CONCURRENCY; default 8).
	Concurrency int
	// Heartbeat is the interval of an attempt's heartbeats (BATON_RUNNER_HEARTBEAT, a Go
	// duration; default 5s).
	Heartbeat time.Duration
	// WorkDir holds the attempts' workspaces (BATON_RUNNER_WORKDIR; default
	// <temp dir>/baton-runner).
	WorkDir string
	// MaxLog caps an attempt's log in bytes (BATON_RUNNER_MAX_LOG, bytes or with KiB, MiB
	// or GiB; default 10MiB).
	MaxLog int
	// DockerSocket is the Docker Engine socket on which steps naming an image run, when it
	// exists; empty runs every step as a local process (BATON_RUNNER_DOCKER_SOCKET; default
	// /var/run/docker.sock, "off" for none).
	DockerSocket string
	// Executor chooses how steps naming an image run (BATON_RUNNER_EXECUTOR): "" or
	// "docker" in Docker when DockerSocket exists, "kubernetes" as Kubernetes Jobs,
	// "process" as local processes. Steps naming no image always run as local processes.
	Executor string
	// Kubernetes configures the "kubernetes" executor.
	Kubernetes KubernetesConfig
	// SecretKey opens the attempts that carry secrets, which the runs service seals, and
	// seals the results that hold one (BATON_SECRET_KEY: the runs service's key). Without
	// it such attempts fail.
	SecretKey string
}

// ConfigFromEnv reads the service's configuration.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		ID:           strings.TrimSpace(getenv("BATON_RUNNER_ID")),
		WorkDir:      strings.TrimSpace(getenv("BATON_RUNNER_WORKDIR")),
		DockerSocket: strings.TrimSpace(getenv("BATON_RUNNER_DOCKER_SOCKET")),
		SecretKey:    getenv(secrets.EnvKey),
		Executor:     strings.TrimSpace(getenv("BATON_RUNNER_EXECUTOR")),
	}
	switch cfg.Executor {
	case ExecutorAuto, ExecutorDocker, ExecutorProcess:
	case ExecutorKubernetes:
		k, err := kubernetesFromEnv(getenv)
		if err != nil {
			return Config{}, err
		}
		cfg.Kubernetes = k
	default:
		return Config{}, fmt.Errorf("BATON_RUNNER_EXECUTOR: %q is none of docker, kubernetes or process", cfg.Executor)
	}
	if cfg.SecretKey != "" {
		if _, err := secrets.ParseKey(cfg.SecretKey); err != nil {
			return Config{}, fmt.Errorf("%s: %w", secrets.EnvKey, err)
		}
	}
	switch cfg.DockerSocket {
	case "":
		cfg.DockerSocket = DefaultDockerSocket
	case "off":
		cfg.DockerSocket = ""
	}
	if v := strings.TrimSpace(getenv("BATON_RUNNER_CONCURRENCY")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Config{}, fmt.Errorf("BATON_RUNNER_CONCURRENCY: %q is not a positive integer", v)
		}
		cfg.Concurrency = n
	}
	if v := strings.TrimSpace(getenv("BATON_RUNNER_HEARTBEAT")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("BATON_RUNNER_HEARTBEAT: %q is not a positive duration such as 5s", v)
		}
		cfg.Heartbeat = d
	}
	if v := strings.TrimSpace(getenv("BATON_RUNNER_MAX_LOG")); v != "" {
		n, err := parseSize(v)
		if err != nil {
			return Config{}, fmt.Errorf("BATON_RUNNER_MAX_LOG: %w", err)
		}
		cfg.MaxLog = n
	}
	return cfg.withDefaults(), nil
}

func (c Config) withDefaults() Config {
	c.GroupID = cmp.Or(c.GroupID, "baton-"+Name)
	c.Concurrency = cmp.Or(c.Concurrency, DefaultConcurrency)
	c.Heartbeat = cmp.Or(c.Heartbeat, DefaultHeartbeat)
	c.MaxLog = cmp.Or(c.MaxLog, DefaultMaxLog)
	if c.ID == "" {
		c.ID = instanceID()
	}
	if c.WorkDir == "" {
		c.WorkDir = filepath.Join(os.TempDir(), "baton-runner")
	}
	return c
}

// parseSize reads a byte count: a number, optionally with KiB, MiB or GiB.
func parseSize(v string) (int, error) {
	mult := 1
	for suffix, m := range map[string]int{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if num, ok := strings.CutSuffix(v, suffix); ok {
			v, mult = strings.TrimSpace(num), m
			break
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > (1<<40)/mult {
		return 0, fmt.Errorf("%q is not a size such as 10MiB or 1048576", v)
	}
	return n * mult, nil
}

// instanceID is the host name with a random suffix, so replicas on one host differ.
func instanceID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "runner"
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b) // never fails on supported platforms
	return host + "-" + hex.EncodeToString(b)
}

// Publisher sends one event and returns once the broker acknowledged it; *kafkax.Producer
// is one.
type Publisher interface {
	Publish(ctx context.Context, topic, key string, e event.Event) error
}

// Deps are what the service needs from its process.
type Deps struct {
	Kafka     kafkax.Config
	Publisher Publisher
	Resolver  registry.Resolver
	Signer    *auth.Signer
	Logger    *slog.Logger
	// Meter makes the runner's instruments, served at /metrics; nil takes the global one.
	Meter metric.MeterProvider
}

// Service is the runner.
type Service struct {
	// kube, when steps run as Kubernetes Jobs, takes up those a previous process left.
	kube     *executor.Kubernetes
	signer   *auth.Signer
	worker   *worker.Worker
	consumer *kafkax.Consumer
	log      *slog.Logger
}

// New wires the service.
func New(_ context.Context, cfg Config, deps Deps) (*Service, error) {
	switch {
	case deps.Publisher == nil:
		return nil, errors.New("runner: a Publisher is required")
	case deps.Resolver == nil:
		return nil, errors.New("runner: a Resolver is required")
	case deps.Signer == nil:
		return nil, errors.New("runner: a Signer is required")
	}
	cfg = cfg.withDefaults()
	logger := cmp.Or(deps.Logger, slog.Default())
	workDir, err := filepath.Abs(cfg.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("runner work directory: %w", err)
	}
	var box events.Sealer
	if cfg.SecretKey != "" {
		b, err := secrets.FromString(cfg.SecretKey)
		if err != nil {
			return nil, fmt.Errorf("runner: %s: %w", secrets.EnvKey, err)
		}
		box = b
	}
	socket := cfg.DockerSocket
	var kube *executor.Kubernetes
	switch cfg.Executor {
	case ExecutorProcess:
		socket = ""
	case ExecutorKubernetes:
		if kube, err = newKubernetes(cfg.Kubernetes, workDir, logger); err != nil {
			return nil, err
		}
	}
	w := worker.New(worker.Options{
		Sealer:      box,
		ID:          cfg.ID,
		WorkDir:     workDir,
		Concurrency: cfg.Concurrency,
		Heartbeat:   cfg.Heartbeat,
		MaxLog:      cfg.MaxLog,
		Runs:        leases.NewRuns(deps.Resolver, deps.Signer, cfg.ID),
		Publisher:   deps.Publisher,
		Executor:    executors(socket, kube, logger),
		Logger:      logger.With("runner", cfg.ID),
		Meter:       deps.Meter,
	})
	consumer := kafkax.NewConsumer(deps.Kafka, kafkax.ConsumerOptions{
		GroupID: cfg.GroupID,
		Topic:   events.TaskDispatch,
		Handler: w.Handle,
		// A claim retries while the runs service is away (a restart, a deploy) rather than
		// dead-letter the attempt after a few seconds.
		MaxAttempts: 20,
		MaxBackoff:  10 * time.Second,
		Logger:      logger,
	})
	return &Service{kube: kube, signer: deps.Signer, worker: w, consumer: consumer, log: logger}, nil
}

// executors picks a step's executor: a Kubernetes Job when kube is set and the step names
// an image, a container when it names one and the Docker socket exists, else a local
// process.
func executors(socket string, kube *executor.Kubernetes, logger *slog.Logger) func(events.TaskSpec) executor.Executor {
	process := &executor.Process{Logger: logger}
	docker := executor.NewDocker(socket)
	docker.Logger = logger
	return func(spec events.TaskSpec) executor.Executor {
		if spec.Image != "" && kube != nil {
			return kube
		}
		if spec.Image == "" || socket == "" {
			return process
		}
		// Checked every time: the engine may come and go while the runner runs.
		if fi, err := os.Stat(socket); err != nil || fi.Mode()&os.ModeSocket == 0 {
			return process
		}
		return docker
	}
}

// Routes registers the service's endpoints under /api/v2; every one needs a signed
// principal. It has none: runners only consume dispatches and report on Kafka.
func (s *Service) Routes(r fiber.Router) {
	r.Group("/api/v2", fiberauth.Middleware(s.signer))
}

// Run consumes dispatches until ctx ends, then stops the attempts still running (each
// reports failed "runner stopped" if it still can) and returns once they have.
func (s *Service) Run(ctx context.Context) error {
	// What a previous run of this runner finished but did not report goes out first.
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		err := s.worker.Recover(ctx)
		if err == nil {
			break
		}
		s.log.Warn("cannot report recovered attempts; retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
	if s.kube != nil {
		s.adopt(ctx)
	}
	err := s.consumer.Run(ctx)
	s.worker.Wait()
	s.worker.WaitLingering()
	return err
}

// Build makes the service's unit from a connected platform.
func Build(ctx context.Context, p *host.Platform) (host.Unit, error) {
	cfg, err := ConfigFromEnv(p.Env.Getenv)
	if err != nil {
		return host.Unit{}, err
	}
	svc, err := New(ctx, cfg, Deps{
		Kafka: p.Kafka, Publisher: p.Producer, Resolver: p.Resolver, Signer: p.Signer, Logger: p.Logger,
		Meter: p.Telemetry.MeterProvider(),
	})
	if err != nil {
		return host.Unit{}, err
	}
	// The runner owns no data: only its broker decides whether it is ready.
	checks := p.Checks()
	delete(checks, "mongo")
	return host.Unit{Name: Name, Service: svc, Checks: checks, Discoverable: true}, nil
}

// Package standalone runs the gateway and every Baton service in one process: each service
// on a SQLite file of its own in the data directory and all on an in-process Kafka-protocol
// broker, unless real servers are configured. The embedded MongoDB-wire server (FerretDB)
// runs only for a data directory whose embedded MongoDB holds data from an earlier version.
// The parts still talk over HTTP and the Kafka protocol, so what works here works
// distributed for the same reasons.
package standalone

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/baton-flow/baton/gateway"
	"github.com/baton-flow/baton/libs/embedded"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/identity"
	"github.com/baton-flow/baton/services/integrations"
	"github.com/baton-flow/baton/services/runner"
	"github.com/baton-flow/baton/services/runs"
	"github.com/baton-flow/baton/services/schedules"
	"github.com/baton-flow/baton/services/tasks"
	"github.com/baton-flow/baton/services/workflows"
)

// services are every service the process runs besides the gateway.
var services = []host.Builder{
	identity.Build, workflows.Build, tasks.Build, runs.Build, runner.Build, schedules.Build, integrations.Build,
}

// Defaults of the standalone-only variables.
const (
	DefaultDataDir     = ".baton"
	DefaultGatewayAddr = "127.0.0.1:8080"
	// DefaultAdminAddr is where /metrics is served for operators: loopback, like the gateway.
	DefaultAdminAddr   = "127.0.0.1:8081"
	tokenFile          = "admin-token"
	secretKeyFile      = "secret-key"
	serviceKeyFile     = "service-key"
	activationCodeFile = "activation-code"
	runnerDir          = "runner"
)

// DefaultKafkaRetention and kafkaRetentionBytes bound what the embedded broker keeps of
// each partition (BATON_KAFKA_RETENTION sets the first): far longer and more than an
// in-process consumer lags.
const (
	DefaultKafkaRetention = 5 * time.Minute
	kafkaRetentionBytes   = 16 << 20
)

// GCPercent is the garbage collector's target in standalone mode unless GOGC sets one: the
// process holds every service with its database and broker, and at Go's default (100) a
// tenth of its CPU went to collecting at its submit ceiling. At 400 the submits answered a
// second rose by a fifth to a half, for a heap that may reach five times what is live
// instead of twice (tens of MiB here; GOMEMLIMIT bounds it where memory is tight).
const GCPercent = 400

// tuneGC sets GCPercent unless GOGC is set, which the runtime has applied already.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
}

// Run starts everything and serves until ctx ends. It prints the API's URL and the admin
// token to stdout once the gateway is ready.
func Run(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	return RunWithProgress(ctx, getenv, stdout, nil)
}

// RunWithProgress is Run that also tells progress each step of the start as it happens
// (see Progress); a nil progress tells nothing.
func RunWithProgress(ctx context.Context, getenv func(string) string, stdout io.Writer, progress Progress) error {
	return RunWith(ctx, getenv, stdout, Options{Progress: progress})
}

// Options adjust RunWith.
type Options struct {
	// Progress is told each step of the start as it happens; nil tells nothing.
	Progress Progress
	// SpanProcessor, when set, is given every span of the process, all of them recorded,
	// beside the OTLP exporter BATON_OTLP_ENDPOINT may set: a test's in-memory exporter
	// (go.opentelemetry.io/otel/sdk/trace/tracetest). The process's tracer provider is the
	// global one (otel.SetTracerProvider), so one process at a time should be given one.
	SpanProcessor sdktrace.SpanProcessor
}

// RunWith is Run with opts.
func RunWith(ctx context.Context, getenv func(string) string, stdout io.Writer, opts Options) error {
	progress := opts.Progress
	if progress == nil {
		progress = func(Step) {}
	}
	tuneGC(getenv)
	retention := DefaultKafkaRetention
	if v := getenv("BATON_KAFKA_RETENTION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			return fmt.Errorf("BATON_KAFKA_RETENTION: %q is not a duration of a second or more", v)
		}
		retention = d
	}
	dataDir := valueOr(getenv("BATON_DATA_DIR"), DefaultDataDir)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("data dir %s: %w", dataDir, err)
	}
	progress(Step{Kind: StepDataDir, Detail: dataDir})
	token, err := adminToken(dataDir, getenv("BATON_BOOTSTRAP_TOKEN"))
	if err != nil {
		return err
	}
	serviceKey := getenv("BATON_SERVICE_KEY")
	if serviceKey == "" {
		// Kept in the data directory: the callback tokens one start hands to waiting runs
		// are signed with it, and the runs still wait after a restart.
		if serviceKey, err = secrets.LoadOrCreateKey(filepath.Join(dataDir, serviceKeyFile)); err != nil {
			return err
		}
	}
	secretKey := getenv(secrets.EnvKey)
	if secretKey == "" {
		// Kept in the data directory too: what one start seals (password parameters,
		// secured settings) the next must open.
		if secretKey, err = secrets.LoadOrCreateKey(filepath.Join(dataDir, secretKeyFile)); err != nil {
			return err
		}
	}
	overrides := map[string]string{
		secrets.EnvKey: secretKey,
		// Development mode unlocks itself; BATON_AUTO_ACTIVATE=false tries the lock, with the
		// generated code kept in the data directory.
		"BATON_AUTO_ACTIVATE":        valueOr(getenv("BATON_AUTO_ACTIVATE"), "true"),
		"BATON_ACTIVATION_CODE_FILE": valueOr(getenv("BATON_ACTIVATION_CODE_FILE"), filepath.Join(dataDir, activationCodeFile)),
		// The runner's workspaces and journal are this Baton's: another one on the machine,
		// with its own data directory, must not be told of this one's attempts.
		"BATON_RUNNER_WORKDIR":  valueOr(getenv("BATON_RUNNER_WORKDIR"), filepath.Join(dataDir, runnerDir)),
		"BATON_BOOTSTRAP_TOKEN": token,
		"BATON_SERVICE_KEY":     serviceKey,
		"BATON_GATEWAY_ADDR":    valueOr(getenv("BATON_GATEWAY_ADDR"), DefaultGatewayAddr),
		"BATON_ADMIN_ADDR":      valueOr(getenv("BATON_ADMIN_ADDR"), DefaultAdminAddr),
	}
	env := func(key string) string {
		if v, ok := overrides[key]; ok {
			return v
		}
		return getenv(key)
	}

	if getenv("BATON_MONGO_URI") == "" {
		mongoDir, dbPrefix := filepath.Join(dataDir, "mongo"), valueOr(getenv("BATON_MONGO_DB_PREFIX"), "baton_")
		if err := ownDatabaseURLs(getenv, overrides, dataDir, mongoDir, dbPrefix); err != nil {
			return err
		}
		if own := servicesGivenFiles(overrides); len(own) > 0 {
			progress(Step{Kind: StepOwnDatabases, Detail: dataDir, Services: own})
		}
		// Only a data directory from an earlier version keeps services' data there.
		if onMongo := servicesOnMongo(env); len(onMongo) > 0 {
			m, err := startEmbeddedMongo(ctx, mongoDir, dbPrefix, onMongo, progress)
			if err != nil {
				return err
			}
			defer m.Close()
			overrides["BATON_MONGO_URI"] = m.URI()
		}
	}
	if getenv("BATON_KAFKA_BROKERS") == "" {
		prefix := valueOr(getenv("BATON_KAFKA_TOPIC_PREFIX"), events.DefaultTopicPrefix)
		var topics []string
		for _, t := range events.AllTopics {
			topics = append(topics, events.Topic(prefix, t), events.DeadLetter(events.Topic(prefix, t)))
		}
		// The embedded broker keeps messages in memory and loses them at a restart; the
		// databases are the truth. What the in-process consumers have long read is dropped,
		// so the process's memory follows its traffic, not its age.
		progress(Step{Kind: StepBrokerStarting})
		k, err := embedded.StartKafka(embedded.KafkaConfig{Addr: "127.0.0.1:0", Partitions: host.DefaultPartitions, Topics: topics,
			Retention: retention, RetentionBytes: kafkaRetentionBytes})
		if err != nil {
			return fmt.Errorf("embedded kafka: %w", err)
		}
		defer k.Close()
		overrides["BATON_KAFKA_BROKERS"] = strings.Join(k.Brokers(), ",")
		progress(Step{Kind: StepBrokerReady, Detail: overrides["BATON_KAFKA_BROKERS"]})
	}
	cfg, err := host.LoadEnv(env)
	if err != nil {
		return err
	}
	// A MongoDB, embedded or the user's, is connected to only if a service keeps its data
	// there.
	onMongo := servicesOnMongo(env)
	progress(Step{Kind: StepConnecting, Services: onMongo})
	p, err := host.Connect(ctx, "baton", cfg, host.Options{NoMongo: len(onMongo) == 0, SpanProcessor: opts.SpanProcessor})
	if err != nil {
		return err
	}
	defer p.Close(context.WithoutCancel(ctx))

	units := make([]host.Unit, 0, len(services)+1)
	for _, build := range services {
		u, err := build(ctx, p)
		if err != nil {
			return err
		}
		progress(Step{Kind: StepServiceBuilt, Detail: u.Name})
		if !slices.Contains(onMongo, u.Name) {
			// Its readiness does not hang on a MongoDB only other services use.
			delete(u.Checks, "mongo")
		}
		// Services listen on free loopback ports; only the gateway is public.
		u.Addr, u.AdvertiseAddr = "127.0.0.1:0", ""
		name := u.Name
		u.OnServing = func(addr net.Addr) { progress(Step{Kind: StepServiceReady, Detail: name, Addr: addr.String()}) }
		units = append(units, u)
	}
	gw, err := gateway.Build(ctx, p)
	if err != nil {
		return err
	}
	gw.OnServing = func(addr net.Addr) {
		progress(Step{Kind: StepServiceReady, Detail: gw.Name, Addr: addr.String()})
		if admin := p.AdminAddr(); admin != "" {
			fmt.Fprintf(stdout, "Metrics for operators at http://%s/metrics\n", admin)
		}
		fmt.Fprintf(stdout, "Baton is running at http://%s/api/v2\nAdmin token: %s\nIn a browser: http://%s/ (sign in with the admin token)\n", addr, token, addr)
	}
	units = append(units, gw)
	return host.Serve(ctx, p, units...)
}

// adminToken returns the configured token, else the one kept in dataDir, else a new one it
// keeps there (readable only by this user), so scripts keep working across restarts.
func adminToken(dataDir, configured string) (string, error) {
	if configured != "" {
		return configured, nil
	}
	path := filepath.Join(dataDir, tokenFile)
	raw, err := os.ReadFile(path)
	if err == nil && strings.TrimSpace(string(raw)) != "" {
		return strings.TrimSpace(string(raw)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read admin token: %w", err)
	}
	token, err := host.RandomKey()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("keep admin token: %w", err)
	}
	return token, nil
}

func valueOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

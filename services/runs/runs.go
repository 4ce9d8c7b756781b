// Package runs is Baton's runs service: workflow runs, task runs and their logs, and the
// engine that moves them. It asks workflows for the version a run runs, tasks for
// catalogue specs and identity for a team's parameters and limits; it sends task attempts
// to runners over Kafka and follows their reports. Its runscheduledworkflow tasks ask the
// schedules service for their schedules.
package runs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"golang.org/x/sync/errgroup"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/schedulesapi"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/telemetry"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/engine"
	"github.com/baton-flow/baton/services/runs/internal/eventsub"
	"github.com/baton-flow/baton/services/runs/internal/feed"
	"github.com/baton-flow/baton/services/runs/internal/httpapi"
	"github.com/baton-flow/baton/services/runs/internal/sources"
	"github.com/baton-flow/baton/services/runs/internal/storemetrics"
)

// Name is the service's name in discovery, consumer groups and its database name.
const Name = "runs"

// Config is the runs service's own configuration.
type Config struct {
	// GroupID is the consumer group of the service's replicas; default "baton-runs".
	GroupID string
	// Replica names this replica; default a random id (BATON_RUNS_REPLICA).
	Replica string
	// RunnerLease is how long a runner may stay silent before its attempt is lost
	// (BATON_RUNS_RUNNER_LEASE, default 30s).
	RunnerLease time.Duration
	// ReplicaTimeout is how long a replica may stay silent before the others take over its
	// runs (BATON_RUNS_REPLICA_TIMEOUT, default 15s).
	ReplicaTimeout time.Duration
	// Reconcile is how often queued runs and dead replicas are looked at
	// (BATON_RUNS_RECONCILE, default 2s).
	Reconcile time.Duration
	// PublicURL is the gateway's address as tasks reach it, for callback URLs
	// (BATON_PUBLIC_URL, default none).
	PublicURL string
	// SecretKey seals what runs hold from secrets, at rest and in the attempts sent to
	// runners (BATON_SECRET_KEY, required: 32 bytes, hex or base64; the key identity
	// seals with, shared with the runners).
	SecretKey string
	// DatabaseURL picks the service's store (BATON_RUNS_DATABASE_URL): empty keeps it in
	// the shared MongoDB (BATON_MONGO_URI, the database <prefix>runs); sqlite:<path> or
	// file:<path> keeps it in a SQLite file of its own at path, for one replica alone
	// (standalone mode's default).
	DatabaseURL string
	// MetricLabels adds a run's team and workflow to the engine's metrics
	// (BATON_METRICS_LABELS, read with the shared configuration).
	MetricLabels telemetry.MetricLabels
}

// ConfigFromEnv reads the service's configuration.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	key, err := secrets.KeyFromEnv(getenv, "secrets")
	if err != nil {
		return Config{}, err
	}
	cfg := Config{GroupID: "baton-" + Name, Replica: getenv("BATON_RUNS_REPLICA"), PublicURL: getenv("BATON_PUBLIC_URL"),
		SecretKey: key, DatabaseURL: getenv(DatabaseURLEnv)}
	if _, _, err := SQLitePath(cfg.DatabaseURL); err != nil {
		return Config{}, err
	}
	for _, d := range []struct {
		name string
		into *time.Duration
	}{
		{"BATON_RUNS_RUNNER_LEASE", &cfg.RunnerLease},
		{"BATON_RUNS_REPLICA_TIMEOUT", &cfg.ReplicaTimeout},
		{"BATON_RUNS_RECONCILE", &cfg.Reconcile},
	} {
		if raw := getenv(d.name); raw != "" {
			v, err := time.ParseDuration(raw)
			if err != nil || v <= 0 {
				return Config{}, fmt.Errorf("%s: want a positive duration such as 30s, got %q", d.name, raw)
			}
			*d.into = v
		}
	}
	return cfg, nil
}

// What the service asks of other services; nil takes the HTTP client through the Resolver.
type (
	// Definitions reads workflow versions.
	Definitions = app.Definitions
	// Catalogue reads catalogue task specs.
	Catalogue = app.Catalogue
	// Contexts reads teams' run contexts.
	Contexts = app.Contexts
	// TeamContext is what Contexts answer.
	TeamContext = app.TeamContext
	// Approvers reads teams' approver groups.
	Approvers = app.Approvers
	// ApproverGroup is what Approvers answer.
	ApproverGroup = app.ApproverGroup
	// Definition is the workflow version a run runs, as Definitions answer it.
	Definition = domain.Definition
	// Spec is a catalogue task's step, as Catalogue answers it.
	Spec = domain.Spec
	// Schedules makes the runOnce schedules of runscheduledworkflow tasks.
	Schedules = engine.Schedules
	// ScheduleRequest is what Schedules are asked for, ScheduleMade what they answer.
	ScheduleRequest = engine.ScheduleRequest
	ScheduleMade    = engine.ScheduleMade
)

// Producer publishes events and returns once the broker has them; *kafkax.Producer is one.
type Producer interface {
	PublishMany(ctx context.Context, topic string, msgs ...kafkax.Message) error
}

// Deps are what the service needs from its process.
type Deps struct {
	DB        *mongo.Database
	Kafka     kafkax.Config
	Publisher Producer
	Signer    *auth.Signer
	Resolver  registry.Resolver
	Logger    *slog.Logger
	// Meter makes the service's instruments, served at /metrics; nil takes the global one.
	Meter metric.MeterProvider

	Definitions Definitions
	Catalogue   Catalogue
	Contexts    Contexts
	Approvers   Approvers
	Schedules   Schedules
}

// updateConcurrency is how many runners' reports are applied at once.
const updateConcurrency = 64

// Service is the runs service.
type Service struct {
	app      *app.App
	updates  *kafkax.Consumer
	teams    *kafkax.Consumer
	recorded *kafkax.Consumer
	// feed follows runs for the watch streams, told of their changes by changes.
	feed    *feed.Hub
	changes *kafkax.Consumer
	signer  *auth.Signer
	store   storeHandle
}

// New wires the service.
func New(ctx context.Context, cfg Config, deps Deps) (*Service, error) {
	if deps.Publisher == nil {
		return nil, errors.New("runs: a Publisher is required")
	}
	if (deps.Definitions == nil || deps.Catalogue == nil || deps.Contexts == nil) && (deps.Resolver == nil || deps.Signer == nil) {
		return nil, errors.New("runs: a Resolver and a Signer are required to reach workflows, tasks and identity")
	}
	if deps.Definitions == nil {
		deps.Definitions = sources.NewWorkflows(deps.Resolver, deps.Signer)
	}
	if deps.Catalogue == nil {
		deps.Catalogue = sources.NewTasks(deps.Resolver, deps.Signer)
	}
	if deps.Contexts == nil {
		deps.Contexts = sources.NewIdentity(deps.Resolver, deps.Signer)
	}
	if deps.Approvers == nil && deps.Resolver != nil && deps.Signer != nil {
		deps.Approvers = sources.NewIdentity(deps.Resolver, deps.Signer)
	}
	if deps.Schedules == nil && deps.Resolver != nil && deps.Signer != nil {
		deps.Schedules = schedules{schedulesapi.New(deps.Resolver, deps.Signer, sources.Self)}
	}
	var tokens app.Tokens
	if deps.Signer != nil {
		tokens = deps.Signer
	}
	if cfg.GroupID == "" {
		cfg.GroupID = "baton-" + Name
	}
	if cfg.Replica == "" {
		cfg.Replica = "runs-" + uuid.NewString()[:8]
	}
	box, err := secrets.FromString(cfg.SecretKey)
	if err != nil {
		return nil, fmt.Errorf("runs: %s: %w", secrets.EnvKey, err)
	}
	stores, handle, err := openStores(ctx, cfg, deps, box)
	if err != nil {
		return nil, err
	}
	meter := deps.Meter
	if meter == nil {
		meter = otel.GetMeterProvider()
	}
	stores.Runs = storemetrics.New(stores.Runs, meter)
	a := app.New(app.Config{
		Engine: engine.Config{Replica: cfg.Replica, Lease: cfg.RunnerLease, ReplicaTimeout: cfg.ReplicaTimeout,
			Reconcile: cfg.Reconcile, Logger: deps.Logger, Meter: meter,
			MetricLabels: engine.MetricLabels{Team: cfg.MetricLabels.Team, Workflow: cfg.MetricLabels.Workflow}},
		PublicURL: cfg.PublicURL, Logger: deps.Logger,
	}, app.Deps{
		Stores:    stores,
		Publisher: producer{deps.Publisher}, Definitions: deps.Definitions, Catalogue: deps.Catalogue,
		Contexts: deps.Contexts, Approvers: deps.Approvers, Schedules: deps.Schedules, Tokens: tokens, Sealer: box,
	})
	s := &Service{app: a, signer: deps.Signer, store: handle}
	s.updates = kafkax.NewConsumer(deps.Kafka, kafkax.ConsumerOptions{
		GroupID: cfg.GroupID, Topic: events.TaskUpdates, Handler: eventsub.TaskUpdates(a), Logger: deps.Logger,
		// Reports of different runs (the key) are applied side by side: one at a time,
		// each behind the store's writes, they fell behind the runners.
		Concurrency: updateConcurrency,
	})
	s.teams = kafkax.NewConsumer(deps.Kafka, kafkax.ConsumerOptions{
		// A group of its own: joining the updates' group would rebalance it.
		GroupID: cfg.GroupID + "-teams", Topic: events.TeamEvents, Handler: eventsub.TeamEvents(a), Logger: deps.Logger,
		// A deleted team's cancelled runs take a moment to be put away.
		MaxAttempts: 10, MaxBackoff: 5 * time.Second,
	})
	s.recorded = kafkax.NewConsumer(deps.Kafka, kafkax.ConsumerOptions{
		// Each replica in a group of its own: every replica hears of every run, the one
		// holding it or that put it away among them.
		// From the topic's end: a confirmation missed while joining costs a resend.
		GroupID: cfg.GroupID + "-recorded-" + cfg.Replica, GroupLabel: cfg.GroupID + "-recorded", Topic: events.RunEventsRecorded,
		Handler: eventsub.StatusRecorded(a), Logger: deps.Logger, DisableDeadLetter: true, FromNewest: true,
	})
	s.feed = feed.New(httpapi.RunReader(a), 0, deps.Logger).WithTeams(httpapi.SummaryReader(a))
	s.changes = kafkax.NewConsumer(deps.Kafka, kafkax.ConsumerOptions{
		// Each replica in a group of its own, as for the recorded events: a run is
		// watched on whichever replica the watcher reached (package feed).
		GroupID: cfg.GroupID + "-feed-" + cfg.Replica, GroupLabel: cfg.GroupID + "-feed", Topic: events.RunEvents, Types: eventsub.ChangeTypes,
		Handler: eventsub.RunChanges(s.feed), Logger: deps.Logger, DisableDeadLetter: true, FromNewest: true,
	})
	return s, nil
}

// producer sends the engine's messages with the process's Kafka producer, all of them in
// one call: a dispatch does not wait for the status events made before it to be
// acknowledged.
type producer struct{ p Producer }

func (p producer) Publish(ctx context.Context, msgs []engine.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	out := make([]kafkax.Message, len(msgs))
	for i, m := range msgs {
		out[i] = kafkax.Message{Topic: m.Topic, Key: m.Key, Event: m.Event, Trace: m.Trace}
	}
	return p.p.PublishMany(ctx, msgs[0].Topic, out...)
}

// schedules is Schedules on the schedules service's internal API.
type schedules struct{ c *schedulesapi.Client }

func (s schedules) CreateSchedule(ctx context.Context, r ScheduleRequest) (ScheduleMade, error) {
	b := r.By
	made, err := s.c.CreateSchedule(ctx, r.Team, schedulesapi.CreateSchedule{Key: r.Key, WorkflowRef: r.Workflow, Name: r.Name,
		Description: r.Description, Date: r.At, Timezone: r.Timezone, Params: r.Params, Secret: r.Secret, Labels: r.Labels,
		CreatedBy: schedulesapi.Initiator{Type: b.Type, ID: b.ID, Name: b.Name, Person: b.Person}})
	return ScheduleMade{ID: made.ID, At: made.Date, TriggerDisabled: made.TriggerDisabled}, err
}

// Routes registers the service's endpoints: the public ones under /api/v2, behind a signed
// principal, and those Baton's own services call (libs/runsapi), behind a signed service.
func (s *Service) Routes(r fiber.Router) {
	api := r.Group("/api/v2", fiberauth.Middleware(s.signer))
	httpapi.WatchRoutes(api, s.app, s.feed)
	httpapi.Routes(api, s.app)
	httpapi.InternalRoutes(r.Group(runsapi.Prefix, fiberauth.Middleware(s.signer), fiberauth.ServiceOnly()), s.app)
}

// Run moves runs, follows runners' reports and removes deleted teams' runs until ctx ends.
// One that fails stops the others: a service running in part (an engine whose reports no
// longer come, say) is worse than one stopped, which its host restarts.
func (s *Service) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.app.Run(ctx) })
	g.Go(func() error { return s.updates.Run(ctx) })
	g.Go(func() error { return s.teams.Run(ctx) })
	g.Go(func() error { return s.recorded.Run(ctx) })
	g.Go(func() error { return s.feed.Run(ctx) })
	g.Go(func() error { return s.changes.Run(ctx) })
	err := g.Wait()
	if s.store.close != nil {
		// The service's own file: nothing writes to it once its work has stopped.
		err = errors.Join(err, s.store.close())
	}
	return err
}

// Build makes the service's unit from a connected platform.
func Build(ctx context.Context, p *host.Platform) (host.Unit, error) {
	cfg, err := ConfigFromEnv(p.Env.Getenv)
	if err != nil {
		return host.Unit{}, err
	}
	cfg.MetricLabels = p.Env.MetricLabels
	svc, err := New(ctx, cfg, Deps{
		DB: p.Database(Name), Kafka: p.Kafka, Publisher: p.Producer, Signer: p.Signer, Resolver: p.Resolver, Logger: p.Logger,
		Meter: p.Telemetry.MeterProvider(),
	})
	if err != nil {
		return host.Unit{}, err
	}
	checks := p.Checks()
	if svc.store.ping != nil {
		// Its database is a file of its own, not the process's MongoDB.
		delete(checks, "mongo")
		checks["sqlite"] = svc.store.ping
	}
	return host.Unit{Name: Name, Service: svc, Checks: checks, Discoverable: true, BodyLimit: httpx.LargeBodyLimit}, nil
}

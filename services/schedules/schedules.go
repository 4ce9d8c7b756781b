// Package schedules is Baton's schedules service: cron and one-time schedules of team
// workflows, and the scheduler that fires them, one run per fire however many replicas
// run. It follows the team, workflow and run topics: a workflow's schedule trigger turned
// off keeps its schedules from firing, a deleted workflow's are archived, a deleted team's
// removed, and a run's end starts the fire buffered behind it.
package schedules

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"golang.org/x/sync/errgroup"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/schedulesapi"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/schedules/internal/app"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
	"github.com/baton-flow/baton/services/schedules/internal/httpapi"
)

// Name is the service's name in discovery, consumer groups and its database name.
const Name = "schedules"

// self is the principal the schedules service acts as on its own behalf.
var self = auth.Principal{Type: auth.TypeService, ID: Name, Name: Name}

// Config is the service's own configuration.
type Config struct {
	// GroupID is the consumer group of the service's replicas; default "baton-schedules".
	GroupID string
	// SecretKey seals schedules' params at rest (BATON_SECRET_KEY, required: the key the
	// other services use).
	SecretKey string
	// Scheduler tunes the replica's scheduler.
	Scheduler app.SchedulerConfig
	// DatabaseURL picks the service's store (BATON_SCHEDULES_DATABASE_URL): empty keeps it
	// in the shared MongoDB (BATON_MONGO_URI, the database <prefix>schedules);
	// sqlite:<path> or file:<path> keeps it in a SQLite file of its own at path, for one
	// replica alone (standalone mode's default).
	DatabaseURL string
}

// ConfigFromEnv reads the service's configuration.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	key, err := secrets.KeyFromEnv(getenv, "schedules' params")
	if err != nil {
		return Config{}, err
	}
	cfg := Config{GroupID: "baton-" + Name, SecretKey: key, DatabaseURL: getenv(DatabaseURLEnv)}
	if _, _, err := sqlitex.PathOfURL(DatabaseURLEnv, cfg.DatabaseURL); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// What the service asks of other services, as interfaces a test can stand in for.
type (
	// Runs submits fires' runs and reads and cancels them; default: the runs service's
	// internal API.
	Runs = app.Runs
	// Workflows tells whether a workflow exists, whether its schedule trigger is on and
	// which params are passwords; default: the workflows service's internal API.
	Workflows = app.Workflows
)

// Deps are what the service needs from its process.
type Deps struct {
	// DB is the service's database in the shared MongoDB, used unless Config.DatabaseURL
	// names a SQLite file.
	DB     *mongo.Database
	Kafka  kafkax.Config
	Signer *auth.Signer
	// Resolver finds the runs and workflows services.
	Resolver registry.Resolver
	Logger   *slog.Logger

	// Optional stand-ins; nil takes the default described on each type.
	Runs      Runs
	Workflows Workflows
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Meter makes the service's instruments, served at /metrics; nil takes the global one.
	Meter metric.MeterProvider
}

// Service is the schedules service.
type Service struct {
	schedules      *app.Schedules
	scheduler      *app.Scheduler
	store          storeHandle
	teamEvents     *kafkax.Consumer
	workflowEvents *kafkax.Consumer
	runEvents      *kafkax.Consumer
	signer         *auth.Signer
	now            func() time.Time
}

// New wires the service.
func New(ctx context.Context, cfg Config, deps Deps) (*Service, error) {
	if cfg.GroupID == "" {
		cfg.GroupID = "baton-" + Name
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if (deps.Runs == nil || deps.Workflows == nil) && (deps.Resolver == nil || deps.Signer == nil) {
		return nil, errors.New("schedules: a Resolver and a Signer are required to reach the runs and workflows services")
	}
	if deps.Runs == nil {
		deps.Runs = fireRuns{runsapi.New(deps.Resolver, deps.Signer, self)}
	}
	if deps.Workflows == nil {
		deps.Workflows = workflowInfo{workflowsapi.New(deps.Resolver, deps.Signer, self)}
	}
	box, err := secrets.FromString(cfg.SecretKey)
	if err != nil {
		return nil, fmt.Errorf("schedules: %s: %w", secrets.EnvKey, err)
	}
	store, handle, err := openStore(ctx, cfg, deps, box)
	if err != nil {
		return nil, err
	}
	if deps.Meter == nil {
		deps.Meter = otel.GetMeterProvider()
	}
	firer := &app.Firer{Store: store, Runs: deps.Runs, Log: deps.Logger, Now: deps.Now, Metrics: app.NewFireMetrics(deps.Meter)}
	scheduler := app.NewScheduler(bson.NewObjectID().Hex(), cfg.Scheduler, store, firer, deps.Logger)
	schedules := app.NewSchedules(app.Deps{Store: store, Workflows: deps.Workflows, Runs: deps.Runs, Saved: scheduler.Poke,
		NewID: func() string { return bson.NewObjectID().Hex() }, Now: deps.Now})
	return &Service{
		schedules: schedules, scheduler: scheduler, store: handle, signer: deps.Signer, now: deps.Now,
		teamEvents: kafkax.NewConsumer(deps.Kafka, kafkax.ConsumerOptions{
			GroupID: cfg.GroupID, Topic: events.TeamEvents, Handler: teamEvents(schedules), Logger: deps.Logger,
		}),
		workflowEvents: kafkax.NewConsumer(deps.Kafka, kafkax.ConsumerOptions{
			GroupID: cfg.GroupID, Topic: events.WorkflowEvents, Handler: workflowEvents(schedules), Logger: deps.Logger,
		}),
		runEvents: kafkax.NewConsumer(deps.Kafka, kafkax.ConsumerOptions{
			GroupID: cfg.GroupID, Topic: events.RunEvents, Handler: runEvents(schedules), Logger: deps.Logger,
			// Only a run's end matters here; its tasks' events are not even decoded.
			Types: []string{events.TypeStatusWorkflowRun},
		}),
	}, nil
}

// Routes registers the service's endpoints: the public ones under /api/v2, behind a signed
// principal, and those Baton's own services call (libs/schedulesapi), behind a signed
// service.
func (s *Service) Routes(r fiber.Router) {
	httpapi.Routes(r.Group("/api/v2", fiberauth.Middleware(s.signer)), s.schedules, s.now)
	httpapi.InternalRoutes(r.Group(schedulesapi.Prefix, fiberauth.Middleware(s.signer), fiberauth.ServiceOnly()), s.schedules)
}

// Run fires the schedules this replica claims and follows the team, workflow and run
// topics, until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	runs := []func(context.Context) error{s.scheduler.Run, s.teamEvents.Run, s.workflowEvents.Run, s.runEvents.Run}
	// One that fails stops the others: a service working in part is worse than one
	// stopped, which its host restarts.
	g, gctx := errgroup.WithContext(ctx)
	for _, run := range runs {
		g.Go(func() error { return run(gctx) })
	}
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
	svc, err := New(ctx, cfg, Deps{DB: p.Database(Name), Kafka: p.Kafka, Signer: p.Signer, Resolver: p.Resolver, Logger: p.Logger,
		Meter: p.Telemetry.MeterProvider()})
	if err != nil {
		return host.Unit{}, err
	}
	checks := p.Checks()
	if svc.store.ping != nil {
		// Its database is a file of its own, not the process's MongoDB.
		delete(checks, "mongo")
		checks["sqlite"] = svc.store.ping
	}
	return host.Unit{Name: Name, Service: svc, Checks: checks, Discoverable: true}, nil
}

// teamEvents removes a deleted team's schedules.
func teamEvents(s *app.Schedules) kafkax.Handler {
	return kafkax.OnTeamDeleted(func(ctx context.Context, d events.TeamDeleted, _ time.Time) error { return s.TeamDeleted(ctx, d.Name) })
}

// workflowEvents follows workflows' schedule triggers and deletions.
func workflowEvents(s *app.Schedules) kafkax.Handler {
	return func(ctx context.Context, e event.Event) error {
		switch e.Type() {
		case events.TypeWorkflowSaved:
			d, err := events.Decode[events.WorkflowSaved](e)
			if err != nil {
				return kafkax.Permanent(err)
			}
			return s.WorkflowSaved(ctx, d.Team, d.Name, d.Triggers.Schedule)
		case events.TypeWorkflowDeleted:
			d, err := events.Decode[events.WorkflowDeleted](e)
			if err != nil {
				return kafkax.Permanent(err)
			}
			return s.WorkflowDeleted(ctx, d.Team, d.Name)
		}
		return nil
	}
}

// runEvents starts a fire buffered behind a run of a schedule once that run ends. Only a
// run's move to completed is read (its event id ends so), and only runs a schedule started.
func runEvents(s *app.Schedules) kafkax.Handler {
	return func(ctx context.Context, e event.Event) error {
		if e.Type() != events.TypeStatusWorkflowRun || !strings.HasSuffix(e.ID(), "/completed") {
			return nil
		}
		d, err := events.Decode[events.WorkflowRun](e)
		if err != nil {
			return kafkax.Permanent(err)
		}
		if d.InitiatedBy.Type != "schedule" || d.InitiatedBy.ID == "" {
			return nil
		}
		return s.RunEnded(ctx, d.InitiatedBy.ID, d.ID)
	}
}

// fireRuns is app.Runs on the runs service's internal API.
type fireRuns struct{ c *runsapi.Client }

func (r fireRuns) Submit(ctx context.Context, s *domain.Schedule, at time.Time) (string, bool, error) {
	req := runsapi.SubmitRun{Params: s.Params, Secret: s.Secret, Labels: s.Labels, Trigger: "schedule", IdempotencyKey: domain.FireKey(s.ID, at),
		InitiatedBy: runsapi.Initiator{Type: "schedule", ID: s.ID, Name: s.Name, Person: s.CreatedBy.Person}}
	run, err := r.c.SubmitRun(ctx, s.Team, s.Workflow, req)
	return run.ID, run.Created, err
}

func (r fireRuns) Completed(ctx context.Context, run string) (bool, error) {
	st, err := r.c.RunState(ctx, run)
	if apperr.HasReason(err, apperr.WorkflowRunNotFound) {
		return true, nil
	}
	return st.Completed(), err
}

func (r fireRuns) Cancel(ctx context.Context, run, reason string) error {
	_, err := r.c.CancelRun(ctx, run, reason)
	if apperr.HasReason(err, apperr.WorkflowRunNotFound) {
		return nil
	}
	return err
}

// workflowInfo is app.Workflows on the workflows service's internal API.
type workflowInfo struct{ c *workflowsapi.Client }

func (w workflowInfo) Workflow(ctx context.Context, team, name string) (app.WorkflowInfo, error) {
	v, err := w.c.RunnableVersion(ctx, team, name, 0)
	if err != nil {
		return app.WorkflowInfo{}, err
	}
	info := app.WorkflowInfo{ScheduleEnabled: v.Triggers["schedule"].Enabled}
	for _, p := range v.Params {
		if p.Type == "password" {
			info.Secret = append(info.Secret, p.Name)
		}
	}
	return info, nil
}

// Package workflows is Baton's workflows service: workflow definitions, their versions,
// canvases and templates, inside the teams identity announces. It owns the workflow-count
// quota and announces saved and deleted workflows on the workflow topic.
package workflows

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"golang.org/x/sync/errgroup"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/outbox/mongorelay"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/libs/tasksapi"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/workflows/internal/app"
	"github.com/baton-flow/baton/services/workflows/internal/catalogue"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
	"github.com/baton-flow/baton/services/workflows/internal/eventsub"
	"github.com/baton-flow/baton/services/workflows/internal/httpapi"
	"github.com/baton-flow/baton/services/workflows/internal/paramnames"
	"github.com/baton-flow/baton/services/workflows/internal/quotas"
)

// Name is the service's name in discovery, consumer groups and its database name.
const Name = "workflows"

// self is the principal the workflows service acts as on its own behalf.
var self = auth.Principal{Type: auth.TypeService, ID: Name, Name: Name}

// Config is the workflows service's own configuration.
type Config struct {
	// GroupID is the consumer group of the service's replicas; default "baton-workflows".
	GroupID string
	// Outbox tunes the relay publishing workflow events.
	Outbox mongorelay.Config
	// SecretKey seals the defaults and values of password parameters at rest
	// (BATON_SECRET_KEY, required: 32 bytes, hex or base64; the key identity and runs use).
	SecretKey string
	// DatabaseURL picks the store (BATON_WORKFLOWS_DATABASE_URL): empty keeps the service's
	// database in the shared MongoDB (Deps.DB); sqlite:<path> keeps everything in a SQLite
	// file of its own, which serves one replica (standalone mode's default).
	DatabaseURL string
}

// ConfigFromEnv reads the service's configuration.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	key, err := secrets.KeyFromEnv(getenv, "password parameters")
	if err != nil {
		return Config{}, err
	}
	cfg := Config{GroupID: "baton-" + Name, SecretKey: key, DatabaseURL: getenv(DatabaseURLEnv)}
	if _, _, err := sqlitex.PathOfURL(DatabaseURLEnv, cfg.DatabaseURL); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// What the service asks of other services, as interfaces a test (or a deployment without
// those services yet) can stand in for.
type (
	// TaskResolver resolves taskRefs; default: the tasks service's internal API.
	TaskResolver = app.TaskResolver
	// ParamSource lists global and team parameter names; default: identity's internal API
	// for global ones, its team read for a team's.
	ParamSource = app.ParamSource
	// QuotaSource tells a team's maxWorkflowCount; default: identity's team quotas (100
	// for every team when no Resolver is given).
	QuotaSource = app.QuotaSource
	// RunChecker tells whether a workflow has runs that are not completed, and cancels
	// them; default: the runs service's internal API (none when no Resolver is given).
	RunChecker = app.RunChecker
)

// Deps are what the service needs from its process.
type Deps struct {
	// DB is the service's database in the shared MongoDB, unless Config.DatabaseURL names
	// a SQLite file.
	DB    *mongo.Database
	Kafka kafkax.Config
	// Publisher publishes the outbox's events (the process's producer).
	Publisher mongorelay.Publisher
	Signer    *auth.Signer
	// Resolver finds the tasks and identity services.
	Resolver registry.Resolver
	Logger   *slog.Logger

	// Optional stand-ins; nil takes the default described on each type.
	Tasks  TaskResolver
	Params ParamSource
	Quotas QuotaSource
	Runs   RunChecker
}

// Service is the workflows service.
type Service struct {
	teams      *app.Teams
	workflows  *app.Workflows
	templates  *app.Templates
	teamEvents *kafkax.Consumer
	stores     stores
	signer     *auth.Signer
}

// New wires the service.
func New(ctx context.Context, cfg Config, deps Deps) (*Service, error) {
	if cfg.GroupID == "" {
		cfg.GroupID = "baton-" + Name
	}
	if deps.Publisher == nil {
		return nil, errors.New("workflows: a Publisher is required for the workflow events")
	}
	if (deps.Tasks == nil || deps.Params == nil) && (deps.Resolver == nil || deps.Signer == nil) {
		return nil, errors.New("workflows: a Resolver and a Signer are required to reach the tasks and identity services")
	}
	if deps.Tasks == nil {
		deps.Tasks = catalogue.New(tasksapi.New(deps.Resolver, deps.Signer, self))
	}
	if deps.Params == nil {
		deps.Params = paramnames.New(deps.Resolver, deps.Signer, self)
	}
	if deps.Quotas == nil {
		if deps.Resolver == nil || deps.Signer == nil {
			deps.Quotas = app.DefaultQuota(0)
		} else {
			deps.Quotas = quotas.New(deps.Resolver, deps.Signer, self)
		}
	}
	if deps.Runs == nil {
		if deps.Resolver == nil || deps.Signer == nil {
			deps.Runs = app.NoRuns{}
		} else {
			deps.Runs = workflowRuns{runsapi.New(deps.Resolver, deps.Signer, self)}
		}
	}
	box, err := secrets.FromString(cfg.SecretKey)
	if err != nil {
		return nil, fmt.Errorf("workflows: %s: %w", secrets.EnvKey, err)
	}
	st, err := openStores(ctx, cfg, deps, box)
	if err != nil {
		return nil, err
	}
	teams := app.NewTeams(st.teams, st.definitions.DeleteNamespace)
	// Teams come from identity's events; one asked about before its event arrives is
	// looked up in identity.
	known := st.teams
	if deps.Resolver != nil && deps.Signer != nil {
		known = app.NewLookingUpTeams(st.teams, teamLookup{identityapi.New(deps.Resolver, deps.Signer, self)}, teams)
	}
	return &Service{
		teams: teams,
		workflows: app.NewWorkflows(app.WorkflowsDeps{
			Store: st.definitions, Teams: known, Counter: st.counter, Limits: deps.Quotas, Tasks: deps.Tasks,
			Runs: deps.Runs, Params: deps.Params, Relay: st.relay,
		}),
		templates: app.NewTemplates(st.definitions, deps.Tasks, nil),
		teamEvents: kafkax.NewConsumer(deps.Kafka, kafkax.ConsumerOptions{
			GroupID: cfg.GroupID, Topic: events.TeamEvents, Handler: eventsub.TeamEvents(teams), Logger: deps.Logger,
		}),
		stores: st,
		signer: deps.Signer,
	}, nil
}

// Routes registers the service's endpoints under /api/v2; every one needs a signed
// principal.
func (s *Service) Routes(r fiber.Router) {
	httpapi.Routes(r.Group("/api/v2", fiberauth.Middleware(s.signer)), s.workflows, s.templates)
	httpapi.InternalRoutes(r.Group(workflowsapi.Prefix, fiberauth.Middleware(s.signer), fiberauth.ServiceOnly()), s.workflows)
}

// Run follows the team topic, publishes owed workflow events and collects revisions no
// workflow names any more, until ctx ends; then it closes a database of its own.
func (s *Service) Run(ctx context.Context) error {
	runs := []func(context.Context) error{s.teamEvents.Run, s.stores.relay.Run, s.stores.collect}
	// One that fails stops the others: a service working in part is worse than one
	// stopped, which its host restarts.
	g, gctx := errgroup.WithContext(ctx)
	for _, run := range runs {
		g.Go(func() error { return run(gctx) })
	}
	err := g.Wait()
	if s.stores.close != nil {
		// The service's own file: nothing writes to it once its work has stopped.
		err = errors.Join(err, s.stores.close())
	}
	return err
}

// Build makes the service's unit from a connected platform.
func Build(ctx context.Context, p *host.Platform) (host.Unit, error) {
	cfg, err := ConfigFromEnv(p.Env.Getenv)
	if err != nil {
		return host.Unit{}, err
	}
	svc, err := New(ctx, cfg, Deps{
		DB: p.Database(Name), Kafka: p.Kafka, Publisher: p.Producer, Signer: p.Signer, Resolver: p.Resolver,
		Logger: p.Logger,
	})
	if err != nil {
		return host.Unit{}, err
	}
	checks := p.Checks()
	if svc.stores.ping != nil {
		// Its database is a file of its own, not the process's MongoDB.
		delete(checks, "mongo")
		checks["sqlite"] = svc.stores.ping
	}
	return host.Unit{Name: Name, Service: svc, Checks: checks, Discoverable: true, BodyLimit: httpx.LargeBodyLimit}, nil
}

// workflowRuns asks the runs service about one workflow's runs.
type workflowRuns struct{ c *runsapi.Client }

func (r workflowRuns) ActiveRuns(ctx context.Context, team, workflow string) (int, error) {
	return r.c.CountActiveRuns(ctx, team, workflow)
}

func (r workflowRuns) CancelRuns(ctx context.Context, team, workflow string) error {
	_, err := r.c.CancelActiveRuns(ctx, team, workflow)
	return err
}

// teamLookup asks identity about a team.
type teamLookup struct{ c *identityapi.Client }

func (l teamLookup) LookupTeam(ctx context.Context, name string) (domain.Team, error) {
	t, err := l.c.Team(ctx, name)
	if err != nil {
		return domain.Team{}, err
	}
	return domain.Team{ID: t.ID, Name: t.Name, DisplayName: t.DisplayName, CreationDate: t.CreationDate}, nil
}

// Package tasks is Baton's tasks service: the catalogue of task definitions, global and per
// team, and their versions, in JSON or Tekton YAML. It seeds the global catalogue at start
// and answers the workflows service's task references; a deleted team's tasks go with it.
package tasks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/startup"
	"github.com/baton-flow/baton/libs/tasksapi"
	"github.com/baton-flow/baton/services/tasks/internal/app"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
	"github.com/baton-flow/baton/services/tasks/internal/eventsub"
	"github.com/baton-flow/baton/services/tasks/internal/httpapi"
	"github.com/baton-flow/baton/services/tasks/internal/usage"
)

// Name is the service's name in discovery and its database name.
const Name = "tasks"

// Config is the service's own configuration.
type Config struct {
	// GroupID is the consumer group of the service's replicas on the team topic; default
	// "baton-tasks".
	GroupID string
	// SecretKey seals the defaults and values of password parameters at rest
	// (BATON_SECRET_KEY, required: 32 bytes, hex or base64; the key identity, workflows and
	// runs use).
	SecretKey string
	// DatabaseURL picks the service's store (BATON_TASKS_DATABASE_URL): empty keeps it in
	// the shared MongoDB (Deps.DB), sqlite:<path> a SQLite file of its own, which one
	// replica serves.
	DatabaseURL string
}

// ConfigFromEnv reads the service's configuration.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{GroupID: "baton-" + Name, SecretKey: getenv(secrets.EnvKey), DatabaseURL: strings.TrimSpace(getenv(DatabaseURLEnv))}
	if _, _, err := SQLitePath(cfg.DatabaseURL); err != nil {
		return Config{}, err
	}
	if cfg.SecretKey == "" {
		return Config{}, fmt.Errorf("%s is required: the key that seals password parameters at rest "+
			"(32 bytes, hex or base64, e.g. `openssl rand -hex 32`), the same as identity's", secrets.EnvKey)
	}
	if _, err := secrets.ParseKey(cfg.SecretKey); err != nil {
		return Config{}, fmt.Errorf("%s: %w", secrets.EnvKey, err)
	}
	return cfg, nil
}

// UsageChecker tells which workflows use a team task; deleting a task in use is refused.
type UsageChecker interface {
	WorkflowsUsing(ctx context.Context, team, task string) ([]string, error)
}

// Deps are what the service needs from its process.
type Deps struct {
	DB     *mongo.Database
	Signer *auth.Signer
	Logger *slog.Logger
	// Kafka is where team deletions are followed; without brokers (tests of the API
	// alone) they are not.
	Kafka kafkax.Config
	// Resolver finds the workflows service, asked before a team task is deleted whether
	// a workflow uses it. Required unless Usage is set.
	Resolver registry.Resolver
	// Usage, when set, answers that question instead (tests).
	Usage UsageChecker
}

// Service is the tasks service.
type Service struct {
	tasks  *app.Tasks
	signer *auth.Signer
	// teamEvents follows team deletions; nil without brokers.
	teamEvents *kafkax.Consumer
	// store is the service's database, closed once the service stopped if it is its own.
	store storeHandle
}

// New wires the service, prepares its database and seeds the global catalogue (tasks that
// exist are left as they are).
func New(ctx context.Context, cfg Config, deps Deps) (*Service, error) {
	if deps.Signer == nil {
		return nil, errors.New("tasks: Deps.Signer is required")
	}
	var checker app.UsageChecker
	switch {
	case deps.Usage != nil:
		checker = usageAdapter{deps.Usage}
	case deps.Resolver != nil:
		checker = usage.NewChecker(deps.Resolver, deps.Signer, deps.Logger)
	default:
		return nil, errors.New("tasks: Deps.Resolver (or Deps.Usage) is required")
	}
	box, err := secrets.FromString(cfg.SecretKey)
	if err != nil {
		return nil, fmt.Errorf("tasks: %s: %w", secrets.EnvKey, err)
	}
	store, handle, err := openStore(ctx, cfg, deps, box)
	if err != nil {
		return nil, err
	}
	tasks := app.NewTasks(store, checker)
	created := 0
	// Seeding skips the tasks there are: a try cut short is taken up again.
	err = startup.Do(ctx, deps.Logger, "seed the task catalogue", func(ctx context.Context) error {
		n, err := tasks.Seed(ctx)
		created += n
		return err
	})
	if err != nil {
		err = fmt.Errorf("seed the task catalogue: %w", err)
		if handle.close != nil {
			err = errors.Join(err, handle.close())
		}
		return nil, err
	}
	if created > 0 && deps.Logger != nil {
		deps.Logger.Info("seeded the task catalogue", "tasks", created)
	}
	svc := &Service{tasks: tasks, signer: deps.Signer, store: handle}
	if len(deps.Kafka.Brokers) > 0 {
		if cfg.GroupID == "" {
			cfg.GroupID = "baton-" + Name
		}
		svc.teamEvents = kafkax.NewConsumer(deps.Kafka, kafkax.ConsumerOptions{
			GroupID: cfg.GroupID, Topic: events.TeamEvents, Handler: eventsub.TeamEvents(tasks, deps.Logger), Logger: deps.Logger,
		})
	}
	return svc, nil
}

// usageAdapter turns the exported UsageChecker into the use cases' one.
type usageAdapter struct{ UsageChecker }

func (u usageAdapter) WorkflowsUsing(ctx context.Context, ref domain.Ref) ([]string, error) {
	return u.UsageChecker.WorkflowsUsing(ctx, ref.Team, ref.Name)
}

// Routes registers the catalogue under /api/v2, where every endpoint needs a signed
// principal, and the endpoints for Baton's own services under /internal/v1.
func (s *Service) Routes(r fiber.Router) {
	httpapi.Routes(r.Group("/api/v2", fiberauth.Middleware(s.signer)), s.tasks)
	httpapi.InternalRoutes(r.Group(tasksapi.Prefix, fiberauth.Middleware(s.signer), fiberauth.ServiceOnly()), s.tasks)
}

// Run follows the team topic until ctx ends, then closes the service's own database file,
// if it has one.
func (s *Service) Run(ctx context.Context) error {
	var err error
	if s.teamEvents == nil {
		<-ctx.Done()
	} else {
		err = s.teamEvents.Run(ctx)
	}
	if s.store.close != nil {
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
	svc, err := New(ctx, cfg, Deps{
		DB: p.Database(Name), Signer: p.Signer, Logger: p.Logger, Kafka: p.Kafka, Resolver: p.Resolver,
	})
	if err != nil {
		return host.Unit{}, err
	}
	checks := p.Checks()
	if svc.store.ping != nil {
		checks["sqlite"] = svc.store.ping
	}
	return host.Unit{Name: Name, Service: svc, Checks: checks, Discoverable: true}, nil
}

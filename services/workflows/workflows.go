// Package workflows is Baton's workflows service: workflow definitions, their versions,
// canvases and templates, inside the teams identity announces.
package workflows

import (
	"context"
	"log/slog"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/services/workflows/internal/app"
	"github.com/baton-flow/baton/services/workflows/internal/eventsub"
	"github.com/baton-flow/baton/services/workflows/internal/mongostore"
)

// Name is the service's name in discovery, consumer groups and its database name.
const Name = "workflows"

// Config is the workflows service's own configuration.
type Config struct {
	// GroupID is the consumer group of the service's replicas; default "baton-workflows".
	GroupID string
}

// ConfigFromEnv reads the service's configuration. It has no variables of its own yet.
func ConfigFromEnv(func(string) string) (Config, error) { return Config{GroupID: "baton-" + Name}, nil }

// Deps are what the service needs from its process.
type Deps struct {
	DB     *mongo.Database
	Kafka  kafkax.Config
	Signer *auth.Signer
	Logger *slog.Logger
}

// Service is the workflows service.
type Service struct {
	teams      *app.Teams
	teamEvents *kafkax.Consumer
	signer     *auth.Signer
}

// New wires the service.
func New(_ context.Context, cfg Config, deps Deps) (*Service, error) {
	if cfg.GroupID == "" {
		cfg.GroupID = "baton-" + Name
	}
	teams := app.NewTeams(mongostore.NewTeams(deps.DB))
	return &Service{
		teams: teams,
		teamEvents: kafkax.NewConsumer(deps.Kafka, kafkax.ConsumerOptions{
			GroupID: cfg.GroupID, Topic: events.TeamEvents, Handler: eventsub.TeamEvents(teams), Logger: deps.Logger,
		}),
		signer: deps.Signer,
	}, nil
}

// Routes registers the service's endpoints under /api/v2; every one needs a signed
// principal.
func (s *Service) Routes(r fiber.Router) {
	r.Group("/api/v2", s.signer.Middleware())
}

// Run follows the team topic until ctx ends.
func (s *Service) Run(ctx context.Context) error { return s.teamEvents.Run(ctx) }

// Build makes the service's unit from a connected platform.
func Build(ctx context.Context, p *host.Platform) (host.Unit, error) {
	cfg, err := ConfigFromEnv(p.Env.Getenv)
	if err != nil {
		return host.Unit{}, err
	}
	svc, err := New(ctx, cfg, Deps{DB: p.Database(Name), Kafka: p.Kafka, Signer: p.Signer, Logger: p.Logger})
	if err != nil {
		return host.Unit{}, err
	}
	return host.Unit{Name: Name, Service: svc, Checks: p.Checks(), Discoverable: true, BodyLimit: httpx.LargeBodyLimit}, nil
}

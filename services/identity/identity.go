// Package identity is Baton's identity service: teams (and, as they arrive, members,
// users, tokens, parameters and system settings). It owns its own database and announces
// team changes on the team topic.
package identity

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/httpapi"
	"github.com/baton-flow/baton/services/identity/internal/mongostore"
)

// Name is the service's name in discovery and in its database name.
const Name = "identity"

// Config is identity's own configuration.
type Config struct {
	// Outbox tunes the relay publishing team events.
	Outbox outbox.Config
}

// ConfigFromEnv reads identity's configuration. It has no variables of its own yet.
func ConfigFromEnv(func(string) string) (Config, error) { return Config{}, nil }

// Deps are what identity needs from its process.
type Deps struct {
	DB        *mongo.Database
	Publisher outbox.Publisher
	Signer    *auth.Signer
	Logger    *slog.Logger
}

// Service is the identity service.
type Service struct {
	teams  *app.Teams
	relay  *outbox.Relay
	signer *auth.Signer
}

// New wires the service and prepares its database.
func New(ctx context.Context, cfg Config, deps Deps) (*Service, error) {
	store, err := mongostore.NewTeams(ctx, deps.DB)
	if err != nil {
		return nil, fmt.Errorf("identity store: %w", err)
	}
	rcfg := cfg.Outbox
	rcfg.Purge = mongostore.TombstoneFilter
	rcfg.Logger = deps.Logger
	relay := outbox.NewRelay(store.Collection(), deps.Publisher, rcfg)
	return &Service{
		teams:  app.NewTeams(store, relay, func() string { return bson.NewObjectID().Hex() }),
		relay:  relay,
		signer: deps.Signer,
	}, nil
}

// Routes registers identity's endpoints under /api/v2; every one needs a signed principal.
func (s *Service) Routes(r fiber.Router) {
	httpapi.Routes(r.Group("/api/v2", s.signer.Middleware()), s.teams)
}

// Run publishes owed team events until ctx ends.
func (s *Service) Run(ctx context.Context) error { return s.relay.Run(ctx) }

// Build makes identity's unit from a connected platform, for mains and the standalone
// launcher.
func Build(ctx context.Context, p *host.Platform) (host.Unit, error) {
	cfg, err := ConfigFromEnv(p.Env.Getenv)
	if err != nil {
		return host.Unit{}, err
	}
	svc, err := New(ctx, cfg, Deps{DB: p.Database(Name), Publisher: p.Producer, Signer: p.Signer, Logger: p.Logger})
	if err != nil {
		return host.Unit{}, err
	}
	return host.Unit{Name: Name, Service: svc, Checks: p.Checks(), Discoverable: true}, nil
}

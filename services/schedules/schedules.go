// Package schedules is Baton's schedules service: cron and one-time schedules that submit workflow runs.
package schedules

import (
	"context"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/services/schedules/internal/httpapi"
)

// Name is the service's name in discovery and its database name.
const Name = "schedules"

// Config is the service's own configuration.
type Config struct{}

// ConfigFromEnv reads the service's configuration. It has no variables of its own yet.
func ConfigFromEnv(func(string) string) (Config, error) { return Config{}, nil }

// Deps are what the service needs from its process.
type Deps struct {
	DB     *mongo.Database
	Kafka  kafkax.Config
	Signer *auth.Signer
	Logger *slog.Logger
}

// Service is the schedules service.
type Service struct {
	signer *auth.Signer
}

// New wires the service.
func New(_ context.Context, _ Config, deps Deps) (*Service, error) {
	return &Service{signer: deps.Signer}, nil
}

// Routes registers the service's endpoints under /api/v2; every one needs a signed
// principal. So far it checks cron expressions; its other paths answer 404.
func (s *Service) Routes(r fiber.Router) {
	httpapi.Routes(r.Group("/api/v2", fiberauth.Middleware(s.signer)), time.Now)
}

// Run does the service's background work until ctx ends; it has none yet.
func (s *Service) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

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
	return host.Unit{Name: Name, Service: svc, Checks: p.Checks(), Discoverable: true}, nil
}

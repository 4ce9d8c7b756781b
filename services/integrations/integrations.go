// Package integrations is Baton's integrations service: runs started by CloudEvents,
// webhooks, code-host deliveries and chat commands; the code-host and chat-platform apps'
// installs and links; and the delivery of run, task-run and action status events to the
// HTTP sinks of settings and to chat channels.
package integrations

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/httpapi"
)

// Name is the service's name in discovery, consumer groups and its database name.
const Name = "integrations"

// self is the principal the integrations service acts as on its own behalf.
var self = auth.Principal{Type: auth.TypeService, ID: Name, Name: Name}

// Config is the service's own configuration.
type Config struct {
	// GroupID prefixes the consumer groups of the service's replicas; default
	// "baton-integrations".
	GroupID string
	// SecretKey seals the chat installs' bot tokens at rest (BATON_SECRET_KEY, required:
	// the key the other services use).
	SecretKey string
	// PublicURL is the gateway's address as browsers and the platforms reach it
	// (BATON_PUBLIC_URL): the chat install's redirect URI and the links in messages.
	PublicURL string
	// ChatAPIURL is the base of the chat platform's Web API (BATON_CHAT_API_URL, default
	// https://slack.com/api): OAuth code exchange, user lookup, messages.
	ChatAPIURL string
	// ChatAuthorizeURL is the chat platform's OAuth authorize page, where an install
	// starts (BATON_CHAT_AUTHORIZE_URL, default https://slack.com/oauth/v2/authorize).
	ChatAuthorizeURL string
	// Delivery tunes the delivery of status events to the sinks of settings
	// (BATON_SINK_TIMEOUT, BATON_SINK_RETRY_MAX, BATON_SINK_GIVE_UP_AFTER).
	Delivery DeliveryConfig
}

// Defaults of the chat platform's addresses.
const (
	DefaultChatAPIURL       = "https://slack.com/api"
	DefaultChatAuthorizeURL = "https://slack.com/oauth/v2/authorize"
)

// ConfigFromEnv reads the service's configuration.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	key, err := secrets.KeyFromEnv(getenv, "chat installs' bot tokens")
	if err != nil {
		return Config{}, err
	}
	cfg := Config{GroupID: "baton-" + Name, SecretKey: key, PublicURL: getenv("BATON_PUBLIC_URL"),
		ChatAPIURL: or(getenv("BATON_CHAT_API_URL"), DefaultChatAPIURL), ChatAuthorizeURL: or(getenv("BATON_CHAT_AUTHORIZE_URL"), DefaultChatAuthorizeURL)}
	for name, v := range map[string]string{"BATON_PUBLIC_URL": cfg.PublicURL, "BATON_CHAT_API_URL": cfg.ChatAPIURL, "BATON_CHAT_AUTHORIZE_URL": cfg.ChatAuthorizeURL} {
		if v == "" {
			continue
		}
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Config{}, fmt.Errorf("%s: want an http or https URL, got %q", name, v)
		}
	}
	if cfg.Delivery, err = deliveryFromEnv(getenv); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func or(v, dflt string) string {
	if v == "" {
		return dflt
	}
	return v
}

// What the service asks of other services, as interfaces a test can stand in for.
type (
	// Runs submits runs; default: the runs service's internal API.
	Runs = app.Runs
	// Workflows answers which workflows a trigger starts; default: the workflows
	// service's internal API.
	Workflows = app.Workflows
	// Settings reads the sinks and the apps' credentials; default: identity's internal
	// API, each answer kept 2 s.
	Settings = app.Settings
	// People finds the user holding an email; default: identity's internal API.
	People = app.People
)

// Deps are what the service needs from its process.
type Deps struct {
	DB     *mongo.Database
	Kafka  kafkax.Config
	Signer *auth.Signer
	// Resolver finds the runs, workflows and identity services.
	Resolver registry.Resolver
	Logger   *slog.Logger

	// Optional stand-ins; nil takes the default described on each type.
	Runs      Runs
	Workflows Workflows
	Settings  Settings
	People    People
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Service is the integrations service.
type Service struct {
	areas  httpapi.Areas
	signer *auth.Signer
	// runs are the background loops Run starts.
	runs []func(context.Context) error
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
	if (deps.Runs == nil || deps.Workflows == nil || deps.Settings == nil || deps.People == nil) && (deps.Resolver == nil || deps.Signer == nil) {
		return nil, errors.New("integrations: a Resolver and a Signer are required to reach the runs, workflows and identity services")
	}
	if deps.Runs == nil {
		deps.Runs = runsPeer{runsapi.New(deps.Resolver, deps.Signer, self)}
	}
	if deps.Workflows == nil {
		deps.Workflows = workflowsapi.New(deps.Resolver, deps.Signer, self)
	}
	if deps.Settings == nil {
		deps.Settings = &settingsPeer{c: identityapi.New(deps.Resolver, deps.Signer, self), now: deps.Now}
	}
	if deps.People == nil {
		deps.People = peoplePeer{identityapi.New(deps.Resolver, deps.Signer, self)}
	}
	if _, err := secrets.FromString(cfg.SecretKey); err != nil {
		return nil, fmt.Errorf("integrations: %s: %w", secrets.EnvKey, err)
	}
	deliveries, err := newDeliveries(ctx, cfg, deps.DB, deps.Kafka, deps.Settings, deps.Logger, deps.Now)
	if err != nil {
		return nil, fmt.Errorf("integrations: %w", err)
	}
	return &Service{
		runs:   deliveries,
		signer: deps.Signer,
		areas:  httpapi.Areas{Events: &app.Events{}, CodeHost: &app.CodeHost{}, Chat: &app.Chat{}, Now: deps.Now},
	}, nil
}

// Routes registers the service's endpoints under /api/v2. Every one needs a signed
// principal, the anonymous one included: chat requests, code-host deliveries and the
// install landings are open and verified by their own signatures.
func (s *Service) Routes(r fiber.Router) {
	httpapi.Routes(r.Group("/api/v2", fiberauth.OpenMiddleware(s.signer)), s.areas)
}

// Run does the service's background work until ctx ends: delivering status events and
// following the topics it reacts to.
func (s *Service) Run(ctx context.Context) error {
	if len(s.runs) == 0 {
		<-ctx.Done()
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, len(s.runs))
	for i, run := range s.runs {
		wg.Go(func() { errs[i] = run(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Build makes the service's unit from a connected platform.
func Build(ctx context.Context, p *host.Platform) (host.Unit, error) {
	cfg, err := ConfigFromEnv(p.Env.Getenv)
	if err != nil {
		return host.Unit{}, err
	}
	svc, err := New(ctx, cfg, Deps{DB: p.Database(Name), Kafka: p.Kafka, Signer: p.Signer, Resolver: p.Resolver, Logger: p.Logger})
	if err != nil {
		return host.Unit{}, err
	}
	return host.Unit{Name: Name, Service: svc, Checks: p.Checks(), Discoverable: true}, nil
}

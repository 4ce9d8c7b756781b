// Package integrations is Baton's integrations service: runs started by CloudEvents,
// webhooks, code-host deliveries and chat commands; the code-host and chat-platform apps'
// installs and links; and the delivery of run, task-run and action status events to the
// HTTP sinks of settings and to chat channels.
package integrations

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.opentelemetry.io/otel/metric"
	"golang.org/x/sync/errgroup"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/chatapi"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
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
	// CodeHostAppURL is the code-host app's page (BATON_CODEHOST_APP_URL, e.g.
	// https://github.com/apps/baton); its install flow starts at
	// <CodeHostAppURL>/installations/new. Empty: GET /integration gives no install link.
	CodeHostAppURL string
	// Delivery tunes the delivery of status events to the sinks of settings
	// (BATON_SINK_TIMEOUT, BATON_SINK_RETRY_MAX, BATON_SINK_GIVE_UP_AFTER).
	Delivery DeliveryConfig
	// DatabaseURL picks the service's store (BATON_INTEGRATIONS_DATABASE_URL): empty keeps
	// it in the shared MongoDB (BATON_MONGO_URI, the database <prefix>integrations);
	// sqlite:<path> or file:<path> keeps it in a SQLite file of its own at path, for one
	// replica alone (standalone mode's default).
	DatabaseURL string
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
	cfg.CodeHostAppURL = getenv("BATON_CODEHOST_APP_URL")
	cfg.DatabaseURL = getenv(DatabaseURLEnv)
	if _, _, err := SQLitePath(cfg.DatabaseURL); err != nil {
		return Config{}, err
	}
	for name, v := range map[string]string{"BATON_PUBLIC_URL": cfg.PublicURL, "BATON_CHAT_API_URL": cfg.ChatAPIURL, "BATON_CHAT_AUTHORIZE_URL": cfg.ChatAuthorizeURL,
		"BATON_CODEHOST_APP_URL": cfg.CodeHostAppURL} {
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
	// Teams tells whether a team exists; default: identity's internal API.
	Teams = app.Teams
	// Actions decides actions as a chat user's Baton user; default: the runs service's
	// public actions API, called as that user.
	Actions = app.Actions
	// WorkflowParams reads a workflow's params (the chat run modal); default: the
	// workflows service's internal API.
	WorkflowParams = app.WorkflowParams
)

// Deps are what the service needs from its process.
type Deps struct {
	// DB is the service's database in the shared MongoDB, used unless Config.DatabaseURL
	// names a SQLite file.
	DB    *mongo.Database
	Kafka kafkax.Config
	// Publisher tells the runs service which status events are recorded; default a
	// producer of its own on Kafka.
	Publisher Producer
	Signer    *auth.Signer
	// Resolver finds the runs, workflows and identity services.
	Resolver registry.Resolver
	Logger   *slog.Logger
	// Meter makes the service's instruments, served at /metrics; nil takes the global one.
	Meter metric.MeterProvider

	// Optional stand-ins; nil takes the default described on each type.
	Runs      Runs
	Workflows Workflows
	Settings  Settings
	People    People
	Teams     Teams
	Actions   Actions
	Params    WorkflowParams
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Service is the integrations service.
type Service struct {
	areas  httpapi.Areas
	signer *auth.Signer
	store  storeHandle
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
	standIns := deps.Runs != nil && deps.Workflows != nil && deps.Settings != nil && deps.People != nil && deps.Teams != nil &&
		deps.Actions != nil && deps.Params != nil
	if !standIns && (deps.Resolver == nil || deps.Signer == nil) {
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
	if deps.Teams == nil {
		deps.Teams = teamsPeer{identityapi.New(deps.Resolver, deps.Signer, self)}
	}
	if deps.Actions == nil {
		deps.Actions = actionsPeer{peer.New(runsapi.Service, deps.Resolver, deps.Signer, actionsTimeout)}
	}
	if deps.Params == nil {
		deps.Params = paramsPeer{workflowsapi.New(deps.Resolver, deps.Signer, self)}
	}
	box, err := secrets.FromString(cfg.SecretKey)
	if err != nil {
		return nil, fmt.Errorf("integrations: %s: %w", secrets.EnvKey, err)
	}
	key, err := secrets.ParseKey(cfg.SecretKey)
	if err != nil {
		return nil, fmt.Errorf("integrations: %s: %w", secrets.EnvKey, err)
	}

	store, handle, err := openStore(ctx, cfg, deps, box)
	if err != nil {
		return nil, err
	}
	// Once wired, the service closes its file when it stops; a failure before closes it
	// here.
	wired := false
	defer func() {
		if !wired && handle.close != nil {
			_ = handle.close()
		}
	}()
	codehost := app.NewCodeHost(app.CodeHostConfig{AppURL: cfg.CodeHostAppURL, StateKey: domain.CodeHostStateKey(key)}, app.CodeHostDeps{
		Store: store.codehost, Runs: deps.Runs, Workflows: deps.Workflows, Settings: deps.Settings, Teams: deps.Teams, Now: deps.Now, Log: deps.Logger})
	codehostTeams := kafkax.NewConsumer(deps.Kafka, kafkax.ConsumerOptions{
		GroupID: cfg.GroupID + "-codehost", Topic: events.TeamEvents, Handler: codehostTeamEvents(codehost), Logger: deps.Logger,
	})

	chat := &app.Chat{Store: store.chat, Platform: chatapi.New(cmp.Or(cfg.ChatAPIURL, DefaultChatAPIURL), chatCallTimeout),
		Runs: deps.Runs, Workflows: deps.Workflows, Params: deps.Params, Settings: deps.Settings, People: deps.People, Actions: deps.Actions,
		StateKey: app.ChatStateKey(key), PublicURL: cfg.PublicURL, AuthorizeURL: cmp.Or(cfg.ChatAuthorizeURL, DefaultChatAuthorizeURL),
		Now: deps.Now, Log: deps.Logger.With("area", "chat")}
	codehost.Chat = chat.Integration
	receipts := store.receipts
	evs := app.NewEvents(deps.Runs, app.NewTriggerCache(deps.Workflows, triggerTTL, deps.Now), receipts, deps.Now, deps.Logger)
	if deps.Publisher == nil {
		deps.Publisher = kafkax.NewProducer(deps.Kafka)
	}
	deliveries, err := newDeliveries(cfg, store.deliveries, deps.Kafka, deps.Publisher, deps.Settings, deps.Logger, deps.Now, deps.Meter)
	if err != nil {
		return nil, fmt.Errorf("integrations: %w", err)
	}

	s := &Service{
		signer: deps.Signer,
		store:  handle,
		areas:  httpapi.Areas{Events: evs, CodeHost: codehost, Chat: chat, Now: deps.Now},
		runs: []func(context.Context) error{
			sweep(purgeEvery, func(ctx context.Context, now time.Time) error { return receipts.Purge(ctx, now.Add(-app.ReceiptTTL)) }, deps.Now, deps.Logger),
			// At shutdown, the event receipts still being written are waited for.
			func(ctx context.Context) error { <-ctx.Done(); evs.Wait(); return nil },
			sweep(purgeEvery, codehost.Purge, deps.Now, deps.Logger), codehostTeams.Run},
	}
	s.runs = append(s.runs, deliveries...)
	s.runs = append(s.runs, kafkax.NewConsumer(deps.Kafka, kafkax.ConsumerOptions{
		GroupID: cfg.GroupID + "-chat", Topic: events.RunEvents, Handler: chatRunEvents(chat), Logger: deps.Logger,
		// Task runs' events are not even decoded: chat posts runs and actions.
		Types:       []string{events.TypeStatusWorkflowRun, events.TypeStatusAction},
		Concurrency: chatConcurrency, MaxAttempts: chatAttempts, Backoff: time.Second, MaxBackoff: 30 * time.Second, DisableDeadLetter: true,
	}).Run, sweep(sweepEvery, store.chat.Sweep, deps.Now, deps.Logger))
	wired = true
	return s, nil
}

// The chat platform's pace: each call is bounded, and a message that cannot be posted is
// tried chatAttempts times over about a minute, then dropped and logged. Its own consumer
// group and chatConcurrency runs at once keep a slow platform from holding anything else.
const (
	chatCallTimeout = 10 * time.Second
	chatAttempts    = 6
	chatConcurrency = 16
)

// chatRunEvents posts run ends and actions to chat channels.
func chatRunEvents(chat *app.Chat) kafkax.Handler {
	return func(ctx context.Context, e event.Event) error {
		switch e.Type() {
		case events.TypeStatusWorkflowRun:
			d, err := events.Decode[events.WorkflowRun](e)
			if err != nil {
				return kafkax.Permanent(err)
			}
			return chat.RunStatus(ctx, e.ID(), d)
		case events.TypeStatusAction:
			d, err := events.Decode[events.Action](e)
			if err != nil {
				return kafkax.Permanent(err)
			}
			return chat.ActionStatus(ctx, e.ID(), d)
		}
		return nil
	}
}

// sweepEvery is how often the chat app's expired records are removed, where no TTL index
// does it (the embedded MongoDB, a SQLite file): replay records expire after minutes.
const sweepEvery = time.Minute

// sweep runs fn every interval until ctx ends; a failure is logged and tried next time.
func sweep(every time.Duration, fn func(context.Context, time.Time) error, now func() time.Time, log *slog.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				if err := fn(ctx, now()); err != nil && ctx.Err() == nil {
					log.Warn("cannot remove expired records", "error", err)
				}
			}
		}
	}
}

// codehostTeamEvents removes a deleted team's code-host links.
func codehostTeamEvents(c *app.CodeHost) kafkax.Handler {
	return kafkax.OnTeamDeleted(func(ctx context.Context, d events.TeamDeleted, _ time.Time) error { return c.TeamDeleted(ctx, d.Name) })
}

// triggerTTL is how long a workflow's trigger is kept for the events and webhooks that
// follow: a changed condition applies within it (a trigger turned off at once: the runs
// service refuses its runs).
const triggerTTL = time.Second

// purgeEvery is how often the event receipts and code-host delivery records past their
// 24 hours are removed, where no TTL index does it (the embedded MongoDB, a SQLite file).
const purgeEvery = 10 * time.Minute

// Routes registers the service's endpoints under /api/v2. Every one needs a signed
// principal, the anonymous one included: chat requests, code-host deliveries and the
// install landings are open and verified by their own signatures.
func (s *Service) Routes(r fiber.Router) {
	httpapi.Routes(r.Group("/api/v2", fiberauth.OpenMiddleware(s.signer)), s.areas)
}

// Run does the service's background work until ctx ends: delivering status events and
// following the topics it reacts to.
func (s *Service) Run(ctx context.Context) error {
	// One that fails stops the others: a service working in part is worse than one
	// stopped, which its host restarts.
	g, gctx := errgroup.WithContext(ctx)
	for _, run := range s.runs {
		g.Go(func() error { return run(gctx) })
	}
	if len(s.runs) == 0 {
		<-ctx.Done()
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
	svc, err := New(ctx, cfg, Deps{DB: p.Database(Name), Kafka: p.Kafka, Publisher: p.Producer, Signer: p.Signer, Resolver: p.Resolver, Logger: p.Logger,
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

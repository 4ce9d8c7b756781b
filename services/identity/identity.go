// Package identity is Baton's identity service: teams (and, as they arrive, members,
// users, tokens, parameters and system settings). It owns its own database and announces
// team changes on the team topic.
package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/outbox/mongorelay"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/startup"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/domain"
	"github.com/baton-flow/baton/services/identity/internal/httpapi"
)

// Name is the service's name in discovery and in its database name.
const Name = "identity"

// self is the principal identity acts as towards other services.
var self = auth.Principal{Type: auth.TypeService, ID: Name, Name: Name}

// Config is identity's own configuration.
type Config struct {
	// Outbox tunes the relay publishing team events.
	Outbox mongorelay.Config
	// SecretKey seals password parameters and secured settings at rest (BATON_SECRET_KEY,
	// 32 bytes hex or base64; required by ConfigFromEnv). Empty (tests only): storing or
	// reading a secret fails.
	SecretKey string
	// ActivationCode is the installation's one-time code (BATON_ACTIVATION_CODE).
	ActivationCode string
	// ActivationCodeFile receives a generated code when none is configured
	// (BATON_ACTIVATION_CODE_FILE, default DefaultActivationCodeFile). Empty: no code is
	// generated.
	ActivationCodeFile string
	// AutoActivate unlocks the installation at start (BATON_AUTO_ACTIVATE; standalone).
	AutoActivate bool
	// DatabaseURL picks the service's store (BATON_IDENTITY_DATABASE_URL): empty keeps it
	// in the shared MongoDB (Deps.DB), sqlite:<path> a SQLite file of its own, which one
	// replica serves.
	DatabaseURL string
}

// DefaultActivationCodeFile is where a generated activation code is written.
const DefaultActivationCodeFile = "/var/lib/baton/activation-code"

// LogValue keeps the secret key and the activation code out of logs.
func (c Config) LogValue() slog.Value {
	hidden := func(v string) string {
		if v == "" {
			return ""
		}
		return secrets.Mask
	}
	return slog.GroupValue(
		slog.String("secretKey", hidden(c.SecretKey)),
		slog.String("activationCode", hidden(c.ActivationCode)),
		slog.String("activationCodeFile", c.ActivationCodeFile),
		slog.Bool("autoActivate", c.AutoActivate),
		slog.String("databaseURL", c.DatabaseURL),
	)
}

// ConfigFromEnv reads identity's configuration through getenv.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		// Secrets are taken exactly as configured: trimming could change them.
		SecretKey:          getenv(secrets.EnvKey),
		ActivationCode:     getenv("BATON_ACTIVATION_CODE"),
		ActivationCodeFile: strings.TrimSpace(getenv("BATON_ACTIVATION_CODE_FILE")),
		DatabaseURL:        strings.TrimSpace(getenv(DatabaseURLEnv)),
	}
	if _, _, err := SQLitePath(cfg.DatabaseURL); err != nil {
		return Config{}, err
	}
	if cfg.SecretKey == "" {
		return Config{}, fmt.Errorf("%s is required: identity encrypts password parameters and secured settings with it "+
			"(32 bytes, hex or base64, e.g. `openssl rand -hex 32`)", secrets.EnvKey)
	}
	if _, err := secrets.ParseKey(cfg.SecretKey); err != nil {
		return Config{}, fmt.Errorf("%s: %w", secrets.EnvKey, err)
	}
	if cfg.ActivationCodeFile == "" {
		cfg.ActivationCodeFile = DefaultActivationCodeFile
	}
	if v := strings.TrimSpace(getenv("BATON_AUTO_ACTIVATE")); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return Config{}, fmt.Errorf("BATON_AUTO_ACTIVATE: %q is not true or false", v)
		}
		cfg.AutoActivate = on
	}
	return cfg, nil
}

// Deps are what identity needs from its process.
type Deps struct {
	DB        *mongo.Database
	Publisher mongorelay.Publisher
	Signer    *auth.Signer
	Logger    *slog.Logger
	// Resolver finds the workflows service, which reports teams' workflow counts, and the
	// runs service, asked about a team's runs before it is deleted; without one, teams show
	// a count of 0 and are deleted at once.
	Resolver registry.Resolver
}

// Service is the identity service.
type Service struct {
	teams *app.Teams
	users *app.Users
	// principals builds the principals of users, for token introspection and sign-ins.
	principals *app.Principals
	tokens     *app.Tokens // mints, lists and revokes tokens; authenticates their secrets
	relay      relay
	signer     *auth.Signer
	// store is the service's database, closed once the service stopped if it is its own.
	store stores
	// params, system and activation: global parameters; settings, features, context and
	// navigation; the installation's lock.
	params     *app.Params
	system     *app.System
	activation *app.Activation
	// runContexts answers the runs service: a team's parameter values and run limits.
	runContexts *app.RunContexts
}

// New wires the service and prepares its database.
func New(ctx context.Context, cfg Config, deps Deps) (*Service, error) {
	st, err := openStores(ctx, cfg, deps)
	if err != nil {
		return nil, err
	}
	svc, err := newService(ctx, cfg, deps, st)
	if err != nil && st.close != nil {
		err = errors.Join(err, st.close())
	}
	return svc, err
}

// newService wires the use cases on their stores.
func newService(ctx context.Context, cfg Config, deps Deps, st stores) (*Service, error) {
	newID := func() string { return bson.NewObjectID().Hex() }
	var sealer app.Sealer = app.NoSealer{}
	if cfg.SecretKey != "" {
		box, err := secrets.FromString(cfg.SecretKey)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", secrets.EnvKey, err)
		}
		sealer = box
	}
	system, params, activation, err := newSystem(ctx, cfg, deps, st, sealer)
	if err != nil {
		return nil, err
	}
	principals := app.NewPrincipals(st.users, st.teams)
	tokens := app.NewTokens(st.tokens, st.tokenTeams, principals, newID)
	users := app.NewUsers(st.users, st.teams, newID)
	users.OnUserDeleted = tokens.RevokeUserTokens
	teams := app.NewTeams(st.teams, st.users, st.relay, newID)
	// Team password parameters are sealed like global ones, and the quotas of teams
	// without their own come from the settings.
	teams.Secrets = sealer
	if deps.Resolver != nil {
		teams.WorkflowCount = workflowCount(workflowsapi.New(deps.Resolver, deps.Signer, self))
		users.WorkflowCount = teams.WorkflowCount
		runs := runsapi.New(deps.Resolver, deps.Signer, self)
		teams.Runs = teamRuns{runs}
		teams.RunUsage = runUsage(runs.Usage)
		teams.RunCounters = runUsage(runs.Counters)
	}
	teams.QuotaDefaults = func(ctx context.Context) (domain.TeamQuotas, error) {
		settings, err := system.ResolvedSettings(ctx)
		if err != nil {
			return domain.TeamQuotas{}, err
		}
		return domain.QuotasFrom(settings), nil
	}
	return &Service{
		teams:       teams,
		users:       users,
		principals:  principals,
		tokens:      tokens,
		relay:       st.relay,
		store:       st,
		signer:      deps.Signer,
		params:      params,
		system:      system,
		activation:  activation,
		runContexts: app.NewRunContexts(teams, params, system),
	}, nil
}

// Routes registers identity's endpoints under /api/v2, where every one but PUT /activate
// needs a signed principal, and those for Baton's own services under /internal/v1.
func (s *Service) Routes(r fiber.Router) {
	// Open routes first: the authenticated group's middleware below refuses the anonymous
	// principal, and routes registered before it are matched before it runs.
	httpapi.ActivationRoutes(r.Group("/api/v2"), fiberauth.OpenMiddleware(s.signer), s.activation)
	api := r.Group("/api/v2", fiberauth.Middleware(s.signer))
	httpapi.Routes(api, s.teams, s.users)
	httpapi.ParamRoutes(api, s.params)
	httpapi.SystemRoutes(api, s.system)
	httpapi.TokenRoutes(api, s.tokens)
	internal := r.Group(identityapi.Prefix, fiberauth.Middleware(s.signer), fiberauth.ServiceOnly())
	httpapi.ActivationInternalRoutes(internal, s.activation)
	httpapi.InternalRoutes(internal, s.tokens, s.principals, s.runContexts)
	httpapi.TeamInternalRoutes(internal, s.teams)
	httpapi.ParamInternalRoutes(internal, s.params)
	httpapi.SettingsInternalRoutes(internal, s.system)
}

// newSystem wires the global parameters, settings and activation: it seeds the settings
// and, for a locked installation without a configured code, generates one and writes it
// to the configured file (never to a log).
func newSystem(ctx context.Context, cfg Config, deps Deps, st stores, sealer app.Sealer) (*app.System, *app.Params, *app.Activation, error) {
	system := app.NewSystem(st.system, sealer, host.Version)
	if err := startup.Do(ctx, deps.Logger, "seed the settings", system.SeedSettings); err != nil {
		return nil, nil, nil, err
	}
	acfg := app.ActivationConfig{Code: cfg.ActivationCode, AutoActivate: cfg.AutoActivate}
	if path := cfg.ActivationCodeFile; path != "" {
		acfg.Publish = func(code string) error {
			if err := secrets.WriteFile(path, code); err != nil {
				return fmt.Errorf("%w (set BATON_ACTIVATION_CODE, or BATON_ACTIVATION_CODE_FILE to a writable path)", err)
			}
			return nil
		}
	}
	activation := app.NewActivation(st.system, acfg)
	generated, err := activation.Prepare(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	if generated && deps.Logger != nil {
		deps.Logger.Warn("this installation is locked: unlock it with PUT /api/v2/activate and the one-time code written to the file",
			"file", cfg.ActivationCodeFile)
	}
	return system, app.NewParams(st.params, sealer), activation, nil
}

// Run publishes owed team events until ctx ends, then closes the service's own database
// file, if it has one.
func (s *Service) Run(ctx context.Context) error {
	err := s.relay.Run(ctx)
	if s.store.close != nil {
		err = errors.Join(err, s.store.close())
	}
	return err
}

// Build makes identity's unit from a connected platform, for mains and the standalone
// launcher.
func Build(ctx context.Context, p *host.Platform) (host.Unit, error) {
	cfg, err := ConfigFromEnv(p.Env.Getenv)
	if err != nil {
		return host.Unit{}, err
	}
	svc, err := New(ctx, cfg, Deps{DB: p.Database(Name), Publisher: p.Producer, Signer: p.Signer, Logger: p.Logger, Resolver: p.Resolver})
	if err != nil {
		return host.Unit{}, err
	}
	checks := p.Checks()
	if svc.store.ping != nil {
		// The service's own file answers for its data; the shared MongoDB's check stays, as
		// the process's other services need it.
		checks["sqlite"] = svc.store.ping
	}
	return host.Unit{Name: Name, Service: svc, Checks: checks, Discoverable: true}, nil
}

// workflowCount asks the workflows service, which owns the count, how many workflows a
// team has.
func workflowCount(c *workflowsapi.Client) func(ctx context.Context, team string) (int, error) {
	return func(ctx context.Context, team string) (int, error) {
		u, err := c.TeamUsage(ctx, team)
		return u.CurrentWorkflowCount, err
	}
}

// teamRuns asks the runs service about a whole team's runs.
type teamRuns struct{ c *runsapi.Client }

func (r teamRuns) ActiveRuns(ctx context.Context, team string) (int, error) {
	return r.c.CountActiveRuns(ctx, team, "")
}

func (r teamRuns) CancelRuns(ctx context.Context, team string) error {
	_, err := r.c.CancelActiveRuns(ctx, team, "")
	return err
}

// runUsage reads a team's run usage from the runs service, which owns those counters,
// through read (the client's Usage or Counters).
func runUsage(read func(ctx context.Context, team string) (runsapi.Usage, error)) func(ctx context.Context, team string) (domain.TeamQuotaUsage, error) {
	return func(ctx context.Context, team string) (domain.TeamQuotaUsage, error) {
		u, err := read(ctx, team)
		if err != nil {
			return domain.TeamQuotaUsage{}, err
		}
		return domain.TeamQuotaUsage{CurrentRuns: u.CurrentRuns, CurrentConcurrentRuns: u.CurrentConcurrentRuns,
			CurrentRunTotalDuration: u.CurrentRunTotalDuration, CurrentRunMedianDuration: u.CurrentRunMedianDuration,
			MonthlyResetDate: u.MonthlyResetDate}, nil
	}
}

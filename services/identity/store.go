package identity

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/baton-flow/baton/libs/outbox/mongorelay"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/libs/startup"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/mongostore"
	"github.com/baton-flow/baton/services/identity/internal/sqlitestore"
)

// DatabaseURLEnv names the variable that picks the service's store (Config.DatabaseURL).
const DatabaseURLEnv = "BATON_IDENTITY_DATABASE_URL"

// SQLitePath reads a database URL that names a SQLite file (sqlitex.PathOfURL): ok is
// false for the empty URL, which keeps the shared MongoDB.
func SQLitePath(url string) (path string, ok bool, err error) {
	return sqlitex.PathOfURL(DatabaseURLEnv, url)
}

// relay publishes the team events the store keeps until they are acknowledged.
type relay interface {
	app.Relay
	Run(ctx context.Context) error
}

// stores are the service's store ports, on one database, and what the service keeps of
// it beyond them: the relay of its events, how to check it answers and how to close it
// once the service stopped (nil for the shared MongoDB, which the process closes).
type stores struct {
	teams      app.TeamStore
	tokenTeams app.TokenTeams
	users      app.UserStore
	tokens     app.TokenStore
	params     app.ParamStore
	system     app.SystemStore
	relay      relay
	ping       func(context.Context) error
	close      func() error
}

// openStores opens the store cfg.DatabaseURL picks: a SQLite file of the service's own, or
// its database in the shared MongoDB (deps.DB).
func openStores(ctx context.Context, cfg Config, deps Deps) (stores, error) {
	path, ok, err := SQLitePath(cfg.DatabaseURL)
	if err != nil {
		return stores{}, err
	}
	if ok {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return stores{}, fmt.Errorf("identity: database directory: %w", err)
		}
		s, err := sqlitestore.Open(ctx, path)
		if err != nil {
			return stores{}, fmt.Errorf("identity: %w", err)
		}
		return stores{
			teams: s, tokenTeams: s, users: s, tokens: s, params: s, system: s,
			relay: sqlitestore.NewRelay(s, deps.Publisher, cfg.Outbox.Interval, deps.Logger),
			ping:  s.Ping, close: s.Close,
		}, nil
	}
	if deps.DB == nil {
		return stores{}, fmt.Errorf("identity: a MongoDB database, or %s naming a SQLite file, is required", DatabaseURLEnv)
	}
	var teams *mongostore.Teams
	var users *mongostore.Users
	var tokens *mongostore.Tokens
	err = startup.Do(ctx, deps.Logger, "prepare the identity database", func(ctx context.Context) error {
		var err error
		if teams, err = mongostore.NewTeams(ctx, deps.DB); err != nil {
			return fmt.Errorf("identity store: %w", err)
		}
		if users, err = mongostore.NewUsers(ctx, deps.DB); err != nil {
			return fmt.Errorf("identity user store: %w", err)
		}
		if tokens, err = mongostore.NewTokens(ctx, deps.DB); err != nil {
			return fmt.Errorf("identity token store: %w", err)
		}
		return nil
	})
	if err != nil {
		return stores{}, err
	}
	rcfg := cfg.Outbox
	rcfg.Purge = mongostore.TombstoneFilter
	rcfg.Logger = deps.Logger
	return stores{
		teams: teams, tokenTeams: mongostore.NewTokenTeams(deps.DB), users: users, tokens: tokens,
		params: mongostore.NewParams(deps.DB), system: mongostore.NewSystem(deps.DB),
		relay: mongorelay.NewRelay(teams.Collection(), deps.Publisher, rcfg),
	}, nil
}

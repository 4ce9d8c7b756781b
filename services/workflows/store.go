package workflows

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/baton-flow/baton/libs/outbox/mongorelay"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/workflows/internal/app"
	"github.com/baton-flow/baton/services/workflows/internal/mongostore"
	"github.com/baton-flow/baton/services/workflows/internal/sqlitestore"
)

// DatabaseURLEnv names the variable that picks the service's store (Config.DatabaseURL).
const DatabaseURLEnv = "BATON_WORKFLOWS_DATABASE_URL"

// stores are the service's stores, whichever database holds them.
type stores struct {
	definitions app.DefinitionStore
	teams       app.TeamStore
	counter     app.QuotaCounter
	// relay publishes the events the definitions' changes owe.
	relay interface {
		app.Relay
		Run(ctx context.Context) error
	}
	// collect deletes the revisions no catalog names any more, until ctx ends.
	collect func(ctx context.Context) error
	// ping checks a database of the service's own answers (nil for the shared MongoDB,
	// which the process checks).
	ping func(ctx context.Context) error
	// close closes a database of the service's own once it stopped (nil for the shared
	// MongoDB, which the process closes).
	close func() error
}

// openStores opens the store cfg.DatabaseURL picks: a SQLite file of the service's own, or
// its database in the shared MongoDB (deps.DB).
func openStores(ctx context.Context, cfg Config, deps Deps, box mongostore.Sealer) (stores, error) {
	path, ok, err := sqlitex.PathOfURL(DatabaseURLEnv, cfg.DatabaseURL)
	if err != nil {
		return stores{}, err
	}
	if ok {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return stores{}, fmt.Errorf("workflows: database directory: %w", err)
		}
		s, err := sqlitestore.Open(ctx, path, box)
		if err != nil {
			return stores{}, fmt.Errorf("workflows: %w", err)
		}
		return stores{definitions: s, teams: s, counter: s, collect: s.RunCollector, ping: s.Ping, close: s.Close,
			relay: s.Relay(deps.Publisher, cfg.Outbox.Interval, deps.Logger)}, nil
	}
	if deps.DB == nil {
		return stores{}, fmt.Errorf("workflows: a MongoDB database, or %s naming a SQLite file, is required", DatabaseURLEnv)
	}
	teams := mongostore.NewTeams(deps.DB)
	defs := mongostore.NewDefinitions(deps.DB, box)
	rcfg := cfg.Outbox
	rcfg.Logger = deps.Logger
	return stores{definitions: defs, teams: teams, counter: teams, collect: defs.RunCollector,
		relay: mongorelay.NewRelay(defs.Heads(), deps.Publisher, rcfg)}, nil
}

package schedules

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/libs/startup"
	"github.com/baton-flow/baton/services/schedules/internal/app"
	"github.com/baton-flow/baton/services/schedules/internal/mongostore"
	"github.com/baton-flow/baton/services/schedules/internal/sqlitestore"
)

// DatabaseURLEnv names the variable that picks the service's store (Config.DatabaseURL).
const DatabaseURLEnv = "BATON_SCHEDULES_DATABASE_URL"

// store is what the service asks of its store: the use cases' and the scheduler's ports.
type store interface {
	app.Store
	app.Claims
}

// storeHandle is what the service keeps of its store beyond the ports: how to check it
// answers, and how to close it once the service stopped (nil for the shared MongoDB, which
// the process checks and closes).
type storeHandle struct {
	ping  func(context.Context) error
	close func() error
}

// openStore opens the store cfg.DatabaseURL picks: a SQLite file of the service's own, or
// its database in the shared MongoDB (deps.DB).
func openStore(ctx context.Context, cfg Config, deps Deps, box secrets.Sealer) (store, storeHandle, error) {
	path, ok, err := sqlitex.PathOfURL(DatabaseURLEnv, cfg.DatabaseURL)
	if err != nil {
		return nil, storeHandle{}, err
	}
	if ok {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, storeHandle{}, fmt.Errorf("schedules: database directory: %w", err)
		}
		s, err := sqlitestore.Open(ctx, path, box)
		if err != nil {
			return nil, storeHandle{}, fmt.Errorf("schedules: %w", err)
		}
		return s, storeHandle{ping: s.Ping, close: s.Close}, nil
	}
	if deps.DB == nil {
		return nil, storeHandle{}, fmt.Errorf("schedules: a MongoDB database, or %s naming a SQLite file, is required", DatabaseURLEnv)
	}
	s := mongostore.New(deps.DB, box)
	if err := startup.Do(ctx, deps.Logger, "ensure the schedules database's indexes", s.EnsureIndexes); err != nil {
		return nil, storeHandle{}, err
	}
	return s, storeHandle{}, nil
}

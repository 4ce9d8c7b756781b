package runs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/libs/startup"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/mongostore"
	"github.com/baton-flow/baton/services/runs/internal/sqlitestore"
)

// DatabaseURLEnv names the variable that picks the service's store (Config.DatabaseURL).
const DatabaseURLEnv = "BATON_RUNS_DATABASE_URL"

// SQLitePath reads a database URL that names a SQLite file: sqlite:<path> or file:<path>
// (sqlite:///abs/path too). ok is false for the empty URL, which keeps the shared MongoDB;
// any other URL is refused, as is a query, which could weaken the file's durability.
func SQLitePath(url string) (path string, ok bool, err error) {
	return sqlitex.PathOfURL(DatabaseURLEnv, url)
}

// storeHandle is what the service keeps of its store beyond the ports: how to check it
// answers, and how to close it once the service stopped (nil for the shared MongoDB, which
// the process closes).
type storeHandle struct {
	ping  func(context.Context) error
	close func() error
}

// openStores opens the store cfg.DatabaseURL picks: a SQLite file of the service's own, or
// its database in the shared MongoDB (deps.DB).
func openStores(ctx context.Context, cfg Config, deps Deps, box mongostore.Sealer) (app.Stores, storeHandle, error) {
	path, ok, err := SQLitePath(cfg.DatabaseURL)
	if err != nil {
		return app.Stores{}, storeHandle{}, err
	}
	if ok {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return app.Stores{}, storeHandle{}, fmt.Errorf("runs: database directory: %w", err)
		}
		s, err := sqlitestore.Open(ctx, path, box)
		if err != nil {
			return app.Stores{}, storeHandle{}, fmt.Errorf("runs: %w", err)
		}
		return app.Stores{Runs: s, Quotas: s, Keys: s, Heartbeats: s, Logs: s, Replicas: s, Actions: s, Locks: s, Queues: s},
			storeHandle{ping: s.Ping, close: s.Close}, nil
	}
	if deps.DB == nil {
		return app.Stores{}, storeHandle{}, fmt.Errorf("runs: a MongoDB database, or %s naming a SQLite file, is required", DatabaseURLEnv)
	}
	s := mongostore.New(deps.DB, box)
	if err := startup.Do(ctx, deps.Logger, "ensure the runs database's indexes", s.EnsureIndexes); err != nil {
		return app.Stores{}, storeHandle{}, err
	}
	return app.Stores{Runs: s, Quotas: s, Keys: s, Heartbeats: s, Logs: s, Replicas: s, Actions: s, Locks: s, Queues: s},
		storeHandle{}, nil
}

// RecountSlots writes the teams' concurrency slots in the service's MongoDB database again
// from its runs in flight, and answers how many runs hold one. Only while no replica of
// the service runs on db: standalone mode calls it at start on a data directory whose
// embedded database holds the runs of an earlier version, which kept the slots in memory.
func RecountSlots(ctx context.Context, db *mongo.Database) (int, error) {
	return mongostore.New(db, nil).RecountSlots(ctx)
}

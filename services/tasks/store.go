package tasks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/libs/startup"
	"github.com/baton-flow/baton/services/tasks/internal/app"
	"github.com/baton-flow/baton/services/tasks/internal/mongostore"
	"github.com/baton-flow/baton/services/tasks/internal/sqlitestore"
)

// DatabaseURLEnv names the variable that picks the service's store (Config.DatabaseURL).
const DatabaseURLEnv = "BATON_TASKS_DATABASE_URL"

// SQLitePath reads a database URL that names a SQLite file (sqlitex.PathOfURL): ok is
// false for the empty URL, which keeps the shared MongoDB.
func SQLitePath(url string) (path string, ok bool, err error) {
	return sqlitex.PathOfURL(DatabaseURLEnv, url)
}

// storeHandle is what the service keeps of its store beyond the port: how to check it
// answers, and how to close it once the service stopped (nil for the shared MongoDB, which
// the process closes).
type storeHandle struct {
	ping  func(context.Context) error
	close func() error
}

// openStore opens the store cfg.DatabaseURL picks: a SQLite file of the service's own, or
// its database in the shared MongoDB (deps.DB).
func openStore(ctx context.Context, cfg Config, deps Deps, box mongostore.Sealer) (app.TaskStore, storeHandle, error) {
	path, ok, err := SQLitePath(cfg.DatabaseURL)
	if err != nil {
		return nil, storeHandle{}, err
	}
	if ok {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, storeHandle{}, fmt.Errorf("tasks: database directory: %w", err)
		}
		s, err := sqlitestore.Open(ctx, path, box)
		if err != nil {
			return nil, storeHandle{}, fmt.Errorf("tasks: %w", err)
		}
		return s, storeHandle{ping: s.Ping, close: s.Close}, nil
	}
	if deps.DB == nil {
		return nil, storeHandle{}, fmt.Errorf("tasks: a MongoDB database, or %s naming a SQLite file, is required", DatabaseURLEnv)
	}
	var s *mongostore.Tasks
	err = startup.Do(ctx, deps.Logger, "prepare the tasks database", func(ctx context.Context) error {
		var err error
		s, err = mongostore.NewTasks(ctx, deps.DB, box)
		return err
	})
	if err != nil {
		return nil, storeHandle{}, fmt.Errorf("tasks store: %w", err)
	}
	return s, storeHandle{}, nil
}

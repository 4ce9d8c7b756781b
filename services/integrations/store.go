package integrations

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/libs/startup"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/mongostore"
	"github.com/baton-flow/baton/services/integrations/internal/sqlitestore"
)

// DatabaseURLEnv names the variable that picks the service's store (Config.DatabaseURL).
const DatabaseURLEnv = "BATON_INTEGRATIONS_DATABASE_URL"

// SQLitePath reads a database URL that names a SQLite file (sqlitex.PathOfURL): ok is
// false for the empty URL, which keeps the shared MongoDB.
func SQLitePath(url string) (path string, ok bool, err error) {
	return sqlitex.PathOfURL(DatabaseURLEnv, url)
}

// stores are the ports of the service's store, with the sweeps and purges the service
// runs on them.
type stores struct {
	chat interface {
		app.ChatStore
		Sweep(ctx context.Context, now time.Time) error
	}
	codehost app.CodeHostStore
	receipts interface {
		app.Receipts
		Purge(ctx context.Context, since time.Time) error
	}
	deliveries app.DeliveryStore
}

// storeHandle is what the service keeps of its store beyond the ports: how to check it
// answers, and how to close it once the service stopped (nil for the shared MongoDB, which
// the process checks and closes).
type storeHandle struct {
	ping  func(context.Context) error
	close func() error
}

// openStore opens the store cfg.DatabaseURL picks: a SQLite file of the service's own, or
// its database in the shared MongoDB (deps.DB). box seals the chat installs' bot tokens.
func openStore(ctx context.Context, cfg Config, deps Deps, box *secrets.Box) (stores, storeHandle, error) {
	path, ok, err := SQLitePath(cfg.DatabaseURL)
	if err != nil {
		return stores{}, storeHandle{}, err
	}
	if ok {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return stores{}, storeHandle{}, fmt.Errorf("integrations: database directory: %w", err)
		}
		s, err := sqlitestore.Open(ctx, path, box)
		if err != nil {
			return stores{}, storeHandle{}, fmt.Errorf("integrations: %w", err)
		}
		return stores{chat: s.Chat(), codehost: s.CodeHost(), receipts: s.Receipts(), deliveries: s.Deliveries()},
			storeHandle{ping: s.Ping, close: s.Close}, nil
	}
	if deps.DB == nil {
		return stores{}, storeHandle{}, fmt.Errorf("integrations: a MongoDB database, or %s naming a SQLite file, is required", DatabaseURLEnv)
	}
	chat := mongostore.NewChatStore(deps.DB, box)
	codehost := mongostore.NewCodeHostStore(deps.DB)
	receipts := mongostore.NewReceipts(deps.DB)
	deliveries := mongostore.NewDeliveries(deps.DB)
	for _, ensure := range []func(context.Context) error{chat.EnsureIndexes, codehost.EnsureIndexes, receipts.EnsureIndexes, deliveries.EnsureIndexes} {
		if err := startup.Do(ctx, deps.Logger, "ensure the integrations database's indexes", ensure); err != nil {
			return stores{}, storeHandle{}, fmt.Errorf("integrations: %w", err)
		}
	}
	return stores{chat: chat, codehost: codehost, receipts: receipts, deliveries: deliveries}, storeHandle{}, nil
}

// Package embedded runs Baton's infrastructure in-process for standalone mode and tests:
// a MongoDB-compatible server (FerretDB v1 on SQLite) and a Kafka-compatible broker
// (franz-go's kfake). Neither needs Docker or a separate binary.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// mongoReadyTimeout bounds how long StartMongo waits for the server to answer a ping.
const mongoReadyTimeout = 10 * time.Second

// ferretNewMu serialises ferretdb.New, which writes a package-level variable (the
// version's Package field) without synchronisation.
var ferretNewMu sync.Mutex

// MongoConfig configures StartMongo.
type MongoConfig struct {
	// Dir is the SQLite data directory, one file per database. It is created if missing.
	// Required: data lives only as long as the directory does.
	Dir string
	// Addr is the TCP listen address; empty means "127.0.0.1:0" (a free port). URI names
	// the address actually bound, so give a host clients can dial.
	Addr string
	// Logger receives FerretDB's logs. Nil means quiet: FerretDB logs every wire message
	// at WARN by default, so pass a handler at level Error (or a discarding one).
	Logger *slog.Logger
}

// Mongo is a running embedded FerretDB v1.24 server speaking the MongoDB wire protocol.
//
// FerretDB v1 on SQLite differs from MongoDB in ways that matter to callers:
//   - no multi-document transactions and no change streams;
//   - database names must match ^[a-zA-Z0-9_-]{1,63}$ (MongoDB allows more);
//   - index options partialFilterExpression, expireAfterSeconds (TTL), collation, hidden
//     and text/2dsphere/hashed keys are rejected as not implemented; "sparse" is accepted
//     and silently ignored;
//   - a unique index lets many documents lack the indexed field (SQLite treats the missing
//     values as distinct NULLs), where MongoDB would report a duplicate key;
//   - a duplicate key caused by an update or findAndModify comes back as InternalError
//     (code 1, "UNIQUE constraint failed"), not E11000 (mongox.IsDuplicateKey knows);
//   - only a filter that is exactly {_id: <string or ObjectID>} is a SQLite lookup (served
//     by an index Mongo adds, see idIndexer); every other query scans the collection in
//     Go, as secondary indexes only enforce uniqueness;
//   - writes are not atomic read-modify-writes in FerretDB itself; Mongo serialises them
//     in a proxy in front of it (see wireProxy), so through URI they are.
type Mongo struct {
	proxy  *wireProxy
	uri    string
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// StartMongo starts FerretDB in a goroutine and returns once it answers a ping.
// ctx bounds the start-up only; call Close to stop the server.
func StartMongo(ctx context.Context, cfg MongoConfig) (*Mongo, error) {
	if cfg.Dir == "" {
		return nil, errors.New("start mongo: MongoConfig.Dir is required")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("start mongo: data dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("start mongo: data dir: %w", err)
	}
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	// Clients talk to the proxy on addr; FerretDB itself listens on a loopback port of its
	// own choosing. Listening first also keeps bad addresses away from ferretdb.New, which
	// leaks its SQLite backend when it cannot listen, after which FerretDB's leak tracker
	// panics the whole process from a finalizer at the next GC.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("start mongo: %w", err)
	}

	// FerretDB wants a directory URI ending in "/"; building it as a URL escapes odd
	// characters in the path.
	// Before FerretDB opens the files, so nothing else writes while indexes are built.
	ids := newIDIndexer(dir)
	if err := ids.sweep(ctx); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("start mongo: index _id lookups: %w", err)
	}
	sqliteURL := (&url.URL{Scheme: "file", Path: dir + "/", OmitHost: true}).String()
	ferretNewMu.Lock()
	srv, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: "127.0.0.1:0"},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: sqliteURL,
	})
	ferretNewMu.Unlock()
	if err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("start mongo: %w", err)
	}

	runCtx, cancel := context.WithCancel(context.Background())
	m := &Mongo{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		_ = srv.Run(runCtx) // always nil; it returns when runCtx ends
	}()
	// The listener is bound inside ferretdb.New, so its address is known already.
	upstream, err := url.Parse(srv.MongoDBURI())
	if err != nil {
		_ = ln.Close()
		cancel()
		<-m.done
		return nil, fmt.Errorf("start mongo: FerretDB URI: %w", err)
	}
	m.proxy = newWireProxy(ln, upstream.Host, ids)
	m.uri = (&url.URL{Scheme: "mongodb", Host: ln.Addr().String(), Path: "/"}).String()

	if err := waitMongo(ctx, m.uri); err != nil {
		m.Close()
		return nil, fmt.Errorf("start mongo: %w", err)
	}
	return m, nil
}

// waitMongo pings the server until it answers or the deadline passes.
func waitMongo(ctx context.Context, uri string) error {
	ctx, cancel := context.WithTimeout(ctx, mongoReadyTimeout)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(mongoReadyTimeout))
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	// Ping retries server selection internally until its timeout, so one call suffices.
	if err := client.Ping(ctx, nil); err != nil {
		return fmt.Errorf("wait for ping: %w", err)
	}
	return nil
}

// URI returns a mongodb:// URI for this server, usable by mongo-driver/v2.
func (m *Mongo) URI() string { return m.uri }

// Close stops the server, cutting off connected clients, and waits until it has stopped.
// It is safe to call more than once.
func (m *Mongo) Close() {
	m.once.Do(func() {
		// Cutting the clients first spares FerretDB's 3 s grace period for them.
		m.proxy.close()
		m.cancel()
		<-m.done
	})
}

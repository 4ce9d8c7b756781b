package standalone

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"github.com/baton-flow/baton/libs/embedded"
	"github.com/baton-flow/baton/services/runs"
)

// The embedded MongoDB-wire server (FerretDB on SQLite) runs only for a data directory
// whose embedded MongoDB holds a service's data from an earlier version, and serves only
// those services: every other service keeps its data in a SQLite file of its own (see
// ownDatabaseURLs). On a data directory this version made, nothing uses a MongoDB, so the
// process neither starts the server nor connects to one, and no service's /ready checks
// one. BATON_MONGO_URI, naming a MongoDB of the user's, gives it every service whose
// database URL is unset, as before.

// servicesOnMongo are the services of ownDatabases whose database URL env leaves unset:
// they keep their data in the process's MongoDB.
func servicesOnMongo(env func(string) string) []string {
	var out []string
	for _, d := range ownDatabases {
		if env(d.env) == "" {
			out = append(out, d.service)
		}
	}
	return out
}

// servicesGivenFiles are the services overrides gives a SQLite file of their own.
func servicesGivenFiles(overrides map[string]string) []string {
	var out []string
	for _, d := range ownDatabases {
		if overrides[d.env] != "" {
			out = append(out, d.service)
		}
	}
	return out
}

// startEmbeddedMongo starts the embedded MongoDB-wire server on dir for services, whose
// data an earlier version kept there, and brings what that version left up to date.
func startEmbeddedMongo(ctx context.Context, dir, dbPrefix string, services []string, progress Progress) (*embedded.Mongo, error) {
	progress(Step{Kind: StepStoreStarting, Detail: dir, Services: services})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	m, err := embedded.StartMongo(ctx, embedded.MongoConfig{Dir: dir, Addr: "127.0.0.1:0", Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("embedded mongo: %w", err)
	}
	if slices.Contains(services, runs.Name) {
		if err := recountRunsSlots(ctx, m.URI(), dbPrefix); err != nil {
			m.Close()
			return nil, fmt.Errorf("embedded mongo: %w", err)
		}
	}
	progress(Step{Kind: StepStoreReady, Detail: m.URI()})
	return m, nil
}

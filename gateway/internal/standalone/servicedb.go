package standalone

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/baton-flow/baton/services/identity"
	"github.com/baton-flow/baton/services/integrations"
	"github.com/baton-flow/baton/services/runs"
	"github.com/baton-flow/baton/services/schedules"
	"github.com/baton-flow/baton/services/tasks"
	"github.com/baton-flow/baton/services/workflows"
)

// ownDatabase is a service that keeps its data in a SQLite file of its own in standalone
// mode: the variable naming its store, its name (its database's in the embedded MongoDB)
// and its file in the data directory.
type ownDatabase struct {
	env, service, file string
}

// ownDatabases are the services standalone mode gives a SQLite file, when it runs its
// embedded database.
var ownDatabases = []ownDatabase{
	{runs.DatabaseURLEnv, runs.Name, runs.Name + ".db"},
	{identity.DatabaseURLEnv, identity.Name, identity.Name + ".db"},
	{tasks.DatabaseURLEnv, tasks.Name, tasks.Name + ".db"},
	{workflows.DatabaseURLEnv, workflows.Name, workflows.Name + ".db"},
	{schedules.DatabaseURLEnv, schedules.Name, schedules.Name + ".db"},
	{integrations.DatabaseURLEnv, integrations.Name, integrations.Name + ".db"},
}

// serviceDatabaseURL is where standalone mode keeps a service's data when the process runs
// its embedded database: a SQLite file of its own in the data directory (see
// docs/storage.md), which the service reads and writes directly, where the embedded
// MongoDB-wire server was its bottleneck. A data directory whose embedded MongoDB already
// holds the service's database (made by an earlier version) keeps it there, so that no
// record is lost from sight: ok is false then. A file there already wins, whatever the
// embedded MongoDB holds.
func serviceDatabaseURL(dataDir, mongoDir, dbPrefix, service, file string) (url string, ok bool, err error) {
	path := filepath.Join(dataDir, file)
	if _, err := os.Stat(path); err == nil {
		return "sqlite:" + path, true, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	// The embedded MongoDB keeps each database in a file of its name.
	if _, err := os.Stat(filepath.Join(mongoDir, dbPrefix+service+".sqlite")); err == nil {
		return "", false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	return "sqlite:" + path, true, nil
}

// ownDatabaseURLs sets, in overrides, the database URL of each service of ownDatabases
// that getenv leaves unset and whose data is not in the embedded MongoDB already.
func ownDatabaseURLs(getenv func(string) string, overrides map[string]string, dataDir, mongoDir, dbPrefix string) error {
	for _, d := range ownDatabases {
		if getenv(d.env) != "" {
			continue
		}
		url, ok, err := serviceDatabaseURL(dataDir, mongoDir, dbPrefix, d.service, d.file)
		if err != nil {
			return fmt.Errorf("%s database: %w", d.service, err)
		}
		if ok {
			overrides[d.env] = url
		}
	}
	return nil
}

package standalone

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/baton-flow/baton/services/schedules"
)

// schedulesDBFile is the schedules service's SQLite file in the data directory.
const schedulesDBFile = "schedules.db"

// schedulesDatabase gives the schedules service, when the process runs its embedded
// database and the service's store is not set (BATON_SCHEDULES_DATABASE_URL), a SQLite
// file of its own in the data directory (see docs/storage.md), which its store reads by
// index where the embedded MongoDB-wire server scans. A data directory whose embedded
// MongoDB already holds the schedules database (made by an earlier version) and no file
// keeps the schedules there, so that none drops out of sight, and none stops firing.
func schedulesDatabase(dataDir, mongoDir, dbPrefix string, getenv func(string) string, overrides map[string]string) error {
	if getenv(schedules.DatabaseURLEnv) != "" {
		return nil
	}
	url, ok, err := ownDatabaseURL(dataDir, schedulesDBFile, mongoDir, dbPrefix+schedules.Name)
	if err != nil {
		return err
	}
	if ok {
		overrides[schedules.DatabaseURLEnv] = url
	}
	return nil
}

// ownDatabaseURL answers the URL of a service's SQLite file, file in dataDir, unless
// mongoDir, the embedded MongoDB's, holds the service's database db and dataDir no such
// file: ok is false then. The file is kept once made, whatever the embedded MongoDB holds.
func ownDatabaseURL(dataDir, file, mongoDir, db string) (url string, ok bool, err error) {
	path := filepath.Join(dataDir, file)
	if _, err := os.Stat(path); err == nil {
		return "sqlite:" + path, true, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	// The embedded MongoDB keeps each database in a file of its name.
	if _, err := os.Stat(filepath.Join(mongoDir, db+".sqlite")); err == nil {
		return "", false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	return "sqlite:" + path, true, nil
}

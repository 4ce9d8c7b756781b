package standalone

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/baton-flow/baton/services/runs"
)

// runsDBFile is the runs service's SQLite file in the data directory.
const runsDBFile = "runs.db"

// runsDatabaseURL is where standalone mode keeps the runs service's data when the process
// runs its embedded database: a SQLite file of its own in the data directory (see
// docs/architecture.md, "Storage"), which the runs service reads and writes directly,
// where the embedded MongoDB-wire server was its bottleneck. A data directory whose
// embedded MongoDB already holds the runs service's database (made by an earlier version)
// keeps it there, so that no run is lost from sight: ok is false then.
func runsDatabaseURL(dataDir, mongoDir, dbPrefix string) (url string, ok bool, err error) {
	file := filepath.Join(dataDir, runsDBFile)
	if _, err := os.Stat(file); err == nil {
		return "sqlite:" + file, true, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	// The embedded MongoDB keeps each database in a file of its name.
	if _, err := os.Stat(filepath.Join(mongoDir, dbPrefix+runs.Name+".sqlite")); err == nil {
		return "", false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	return "sqlite:" + file, true, nil
}

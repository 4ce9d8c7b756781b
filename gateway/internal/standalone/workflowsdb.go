package standalone

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/baton-flow/baton/services/workflows"
)

// workflowsDBFile is the workflows service's SQLite file in the data directory.
const workflowsDBFile = "workflows.db"

// workflowsDatabaseURL is where standalone mode keeps the workflows service's data when the
// process runs its embedded database: a SQLite file of its own in the data directory,
// which the service reads and writes directly (see docs/storage.md). A data directory
// whose embedded MongoDB already holds the workflows database (made by an earlier
// version) and no such file keeps it there, so that no workflow is lost from sight: ok is
// false then.
func workflowsDatabaseURL(dataDir, mongoDir, dbPrefix string) (url string, ok bool, err error) {
	file := filepath.Join(dataDir, workflowsDBFile)
	if _, err := os.Stat(file); err == nil {
		return "sqlite:" + file, true, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	// The embedded MongoDB keeps each database in a file of its name.
	if _, err := os.Stat(filepath.Join(mongoDir, dbPrefix+workflows.Name+".sqlite")); err == nil {
		return "", false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	return "sqlite:" + file, true, nil
}

package standalone

import (
	"github.com/baton-flow/baton/services/runs"
)

// runsDBFile is the runs service's SQLite file in the data directory.
const runsDBFile = "runs.db"

// runsDatabaseURL is serviceDatabaseURL for the runs service.
func runsDatabaseURL(dataDir, mongoDir, dbPrefix string) (url string, ok bool, err error) {
	return serviceDatabaseURL(dataDir, mongoDir, dbPrefix, runs.Name, runsDBFile)
}

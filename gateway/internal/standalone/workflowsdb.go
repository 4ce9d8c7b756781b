package standalone

import (
	"github.com/baton-flow/baton/services/workflows"
)

// workflowsDBFile is the workflows service's SQLite file in the data directory.
const workflowsDBFile = "workflows.db"

// workflowsDatabaseURL is serviceDatabaseURL for the workflows service.
func workflowsDatabaseURL(dataDir, mongoDir, dbPrefix string) (url string, ok bool, err error) {
	return serviceDatabaseURL(dataDir, mongoDir, dbPrefix, workflows.Name, workflowsDBFile)
}

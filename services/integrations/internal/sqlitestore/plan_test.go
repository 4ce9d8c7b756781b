package sqlitestore_test

import (
	"testing"

	"github.com/baton-flow/baton/libs/sqlitex/sqlitextest"
	"github.com/baton-flow/baton/services/integrations/internal/sqlitestore"
)

// Every statement of the service's paths goes by an index: no step of its plan scans a
// table or sorts in a temporary tree. The poll for queues due above all, which a replica
// makes every second whatever the number of queues of sinks that are down, and the
// lookups every chat request, code-host delivery and status event makes.
func TestQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	sqlitextest.UseIndexes(t, s.Plan, sqlitestore.HotQueries(), map[string][]string{
		// One row of a table of a few workspaces, whichever comes first.
		"any chat install": {"SCAN chat_installs"},
	})
}

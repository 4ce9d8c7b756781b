package sqlitestore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/integrations/internal/sqlitestore"
)

// Every statement of the service's paths goes by an index: no step of its plan scans a
// table or sorts in a temporary tree. The poll for queues due above all, which a replica
// makes every second whatever the number of queues of sinks that are down, and the
// lookups every chat request, code-host delivery and status event makes.
func TestQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for name, q := range sqlitestore.HotQueries() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			plan, err := s.Plan(context.Background(), q.Query, q.Args...)
			require.NoError(t, err)
			t.Log(plan)
			if q.Query == sqlitestore.QueryAnyInstall {
				// One row of a table of a few workspaces, whichever comes first.
				require.Len(t, plan, 1)
				assert.True(t, strings.HasPrefix(plan[0], "SCAN chat_installs"), plan)
				return
			}
			assert.Empty(t, sqlitex.Unindexed(plan), "%s: %v", name, plan)
		})
	}
}

package sqlitestore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/schedules/internal/sqlitestore"
)

// Every statement of the scheduler's and the use cases' paths goes by an index: no step
// of its plan scans the table or sorts in a temporary tree (but the schedules a request
// names by id, found by primary key). The due query above all: one
// replica polls it every second, whatever the number of schedules not due.
func TestQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for name, q := range sqlitestore.HotQueries() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			plan, err := s.Plan(context.Background(), q.Query, q.Args...)
			require.NoError(t, err)
			require.NotEmpty(t, plan)
			t.Log(plan)
			for _, step := range plan {
				assert.False(t, strings.HasPrefix(step, "SCAN "), "%s: %v", name, plan)
				if q.SortsFound && strings.Contains(plan[0], "sqlite_autoindex_schedules_1 (id=?)") {
					continue // the few schedules named by id, sorted
				}
				assert.NotContains(t, step, "TEMP B-TREE", "%s: %v", name, plan)
			}
		})
	}
}

package sqlitestore_test

import (
	"testing"

	"github.com/baton-flow/baton/libs/sqlitex/sqlitextest"
	"github.com/baton-flow/baton/services/schedules/internal/sqlitestore"
)

// Every statement of the scheduler's and the use cases' paths goes by an index: no step
// of its plan scans the table or sorts in a temporary tree (but the schedules a request
// names by id, found by primary key). The due query above all: one
// replica polls it every second, whatever the number of schedules not due.
func TestQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	sqlitextest.UseIndexes(t, s.Plan, sqlitestore.HotQueries(), map[string][]string{
		// The few schedules a request named by id, sorted.
		"a team's, by id": {"USE TEMP B-TREE"},
	})
}

package sqlitestore_test

import (
	"testing"

	"github.com/baton-flow/baton/libs/sqlitex/sqlitextest"
	"github.com/baton-flow/baton/services/tasks/internal/sqlitestore"
)

// Every statement of the hot paths goes by an index: no step of its plan scans a table
// or sorts in a temporary tree.
func TestHotPathsUseIndexes(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	sqlitextest.UseIndexes(t, s.Plan, sqlitestore.HotQueries(), nil)
}

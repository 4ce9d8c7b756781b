package sqlitestore_test

import (
	"testing"

	"github.com/baton-flow/baton/libs/sqlitex/sqlitextest"
	"github.com/baton-flow/baton/services/workflows/internal/sqlitestore"
)

// Every statement of the hot paths goes by an index: no step of its plan scans a table
// or sorts in a temporary tree. A catalog is read by its primary key's prefix, and a
// version by its unique index: none grows with the number of teams or of versions.
func TestHotPathsUseIndexes(t *testing.T) {
	t.Parallel()
	s, _, _ := newStore(t)
	sqlitextest.UseIndexes(t, s.Plan, sqlitestore.HotQueries(), nil)
}

package sqlitestore_test

import (
	"testing"

	"github.com/baton-flow/baton/libs/sqlitex/sqlitextest"
	"github.com/baton-flow/baton/services/identity/internal/sqlitestore"
)

// Every statement of the hot paths goes by an index: no step of its plan scans a table
// or sorts in a temporary tree. Authenticating a token by its hash is the hottest: the
// gateway asks it for every request whose answer it has not cached.
func TestHotPathsUseIndexes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	sqlitextest.UseIndexes(t, s.Plan, sqlitestore.HotQueries(), nil)
}

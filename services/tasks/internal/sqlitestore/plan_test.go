package sqlitestore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/tasks/internal/sqlitestore"
)

// Every statement of the hot paths goes by an index: no step of its plan scans a table
// or sorts in a temporary tree.
func TestHotPathsUseIndexes(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	for name, q := range sqlitestore.HotQueries() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			plan, err := s.Plan(context.Background(), q.Query, q.Args...)
			require.NoError(t, err)
			require.NotEmpty(t, plan)
			assert.Empty(t, sqlitex.Unindexed(plan), "%s: %v", name, plan)
		})
	}
}

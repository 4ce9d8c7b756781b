package sqlitex_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/sqlitex"
)

// A lookup by an index has no unindexed step; a filter on a column without one, or an
// order no index gives, has.
func TestQueryPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlitex.Open(ctx, filepath.Join(t.TempDir(), "plan.db"), sqlitex.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.Migrate(ctx, []string{`CREATE TABLE t (id TEXT PRIMARY KEY, a TEXT, b TEXT); CREATE INDEX t_a ON t (a)`}))
	tests := []struct {
		query   string
		indexed bool
	}{
		{`SELECT b FROM t WHERE id = ?`, true},
		{`SELECT b FROM t WHERE a = ?`, true},
		{`SELECT b FROM t WHERE b = ?`, false},
		{`SELECT b FROM t WHERE a = ? ORDER BY b`, false},
	}
	for _, tt := range tests {
		plan, err := db.QueryPlan(ctx, tt.query, "x")
		require.NoError(t, err, tt.query)
		require.NotEmpty(t, plan, tt.query)
		assert.Equal(t, tt.indexed, len(sqlitex.Unindexed(plan)) == 0, "%s: %v", tt.query, plan)
	}
}

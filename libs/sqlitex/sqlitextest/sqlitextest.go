// Package sqlitextest holds what the tests of the stores written on libs/sqlitex share.
package sqlitextest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/sqlitex"
)

// Statement is a statement of a store's hot paths, with arguments of the right kinds.
type Statement struct {
	Query string
	Args  []any
}

// Planner answers SQLite's plan of a statement, a line a step (sqlitex.DB.QueryPlan).
type Planner func(ctx context.Context, query string, args ...any) ([]string, error)

// UseIndexes checks, a subtest each, that every statement of stmts goes by an index: no
// step of its plan reads a whole table (SCAN) or sorts in a temporary tree, but those
// allowed names for it (a step that begins with one): a table of a few rows read for its
// first, the few rows a request named sorted.
func UseIndexes(t *testing.T, plan Planner, stmts map[string]Statement, allowed map[string][]string) {
	t.Helper()
	for name, s := range stmts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			steps, err := plan(context.Background(), s.Query, s.Args...)
			require.NoError(t, err)
			t.Log(steps)
			unindexed := slices.DeleteFunc(sqlitex.Unindexed(steps), func(step string) bool {
				return slices.ContainsFunc(allowed[name], func(a string) bool { return strings.HasPrefix(step, a) })
			})
			assert.Empty(t, unindexed, "%s: %v", name, steps)
		})
	}
}

package sqlitex

import (
	"context"
	"strings"
)

// QueryPlan answers the plan SQLite makes for a statement with these arguments (EXPLAIN
// QUERY PLAN), a line a step, as a store's tests check that its hot statements go by an
// index.
func (db *DB) QueryPlan(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := db.read.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		out = append(out, detail)
	}
	return out, rows.Err()
}

// Unindexed returns the steps of a plan that read a whole table (SCAN) or sort in a
// temporary tree: none for a statement that goes by an index.
func Unindexed(plan []string) []string {
	var out []string
	for _, step := range plan {
		if strings.HasPrefix(step, "SCAN ") || strings.Contains(step, "TEMP B-TREE") {
			out = append(out, step)
		}
	}
	return out
}

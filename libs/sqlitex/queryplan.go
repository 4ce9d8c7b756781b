package sqlitex

import (
	"context"
	"strings"
)

// QueryPlan answers SQLite's plan of a statement (EXPLAIN QUERY PLAN), a line a step, for
// the tests that hold a store's hot statements to its indexes.
func (db *DB) QueryPlan(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := db.Query(ctx, "EXPLAIN QUERY PLAN "+query, args...)
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
		out = append(out, strings.TrimSpace(detail))
	}
	return out, rows.Err()
}

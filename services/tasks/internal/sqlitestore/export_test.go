package sqlitestore

import "context"

// Plan answers the query plan of a statement, a line a step.
func (s *Store) Plan(ctx context.Context, query string, args ...any) ([]string, error) {
	return s.db.QueryPlan(ctx, query, args...)
}

// HotQueries are the statements asked for every task a workflow references and for the
// catalogue's pages, with arguments of the right kinds.
func HotQueries() map[string]struct {
	Query string
	Args  []any
} {
	type q = struct {
		Query string
		Args  []any
	}
	return map[string]q{
		"find a task":           {qHead, []any{"team/alpha/build"}},
		"find a version":        {qVersion, []any{"team/alpha/build", 1}},
		"list the global tasks": {listQuery(" WHERE scope = ? AND team = ''", false), []any{"global", 20, 0}},
		"list a team's tasks":   {listQuery(" WHERE scope = ? AND team IN (?)", true), []any{"team", "alpha", 20, 0}},
	}
}

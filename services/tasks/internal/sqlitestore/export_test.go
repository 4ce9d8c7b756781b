package sqlitestore

import (
	"context"

	"github.com/baton-flow/baton/libs/sqlitex/sqlitextest"
)

// Plan answers the query plan of a statement, a line a step.
func (s *Store) Plan(ctx context.Context, query string, args ...any) ([]string, error) {
	return s.db.QueryPlan(ctx, query, args...)
}

// HotQueries are the statements asked for every task a workflow references and for the
// catalogue's pages, with arguments of the right kinds.
func HotQueries() map[string]sqlitextest.Statement {
	type q = sqlitextest.Statement
	return map[string]q{
		"find a task":           {Query: qHead, Args: []any{"team/alpha/build"}},
		"find a version":        {Query: qVersion, Args: []any{"team/alpha/build", 1}},
		"list the global tasks": {Query: listQuery(" WHERE scope = ? AND team = ''", false), Args: []any{"global", 20, 0}},
		"list a team's tasks":   {Query: listQuery(" WHERE scope = ? AND team IN (?)", true), Args: []any{"team", "alpha", 20, 0}},
	}
}

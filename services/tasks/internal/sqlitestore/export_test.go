package sqlitestore

import "context"

// Plan answers the query plan of a statement, a line a step.
func (s *Store) Plan(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := s.db.Query(ctx, "EXPLAIN QUERY PLAN "+query, args...)
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

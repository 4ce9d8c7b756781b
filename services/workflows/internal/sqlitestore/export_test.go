package sqlitestore

import (
	"context"

	"github.com/baton-flow/baton/libs/sqlitex/sqlitextest"
)

// Plan answers the query plan of a statement, a line a step.
func (s *Store) Plan(ctx context.Context, query string, args ...any) ([]string, error) {
	return s.db.QueryPlan(ctx, query, args...)
}

// HotQueries are the statements of the hot paths with arguments of the right kinds: what a
// submit, a read, a list and a save of a workflow ask.
func HotQueries() map[string]sqlitextest.Statement {
	type q = sqlitextest.Statement
	blob := []byte("{}")
	return map[string]q{
		"a catalog's head":          {Query: qHeadSeq, Args: []any{"infra/1"}},
		"a catalog":                 {Query: qCatalog, Args: []any{"infra/1"}},
		"move a head":               {Query: qMoveHead, Args: []any{2, "infra/1", 1}},
		"put a head's entry":        {Query: qPutEntry, Args: []any{"infra/1", "w", 1, nil, "active", nil, 0}},
		"remove an entry":           {Query: qRemoveEntry, Args: []any{"infra/1", "w"}},
		"a version's summary":       {Query: qSummary, Args: []any{"infra/1", "w", 1, 1}},
		"a version with its tasks":  {Query: qRevision, Args: []any{"infra/1", "w", 1, 1}},
		"store a version":           {Query: qInsertRev, Args: []any{"infra/1", "w", 1, 1, "a", "r", 0, blob, blob}},
		"collect a revision":        {Query: qCollect, Args: []any{"infra/1", "w", 1, 1}},
		"a team":                    {Query: qFindTeam, Args: []any{"infra"}},
		"reserve a workflow":        {Query: qReserve, Args: []any{"infra", "id", 100}},
		"release a workflow":        {Query: qRelease, Args: []any{"infra", "id"}},
		"the events owed":           {Query: qOwed, Args: []any{500}},
		"the events published":      {Query: qPublished, Args: []any{10}},
		"a team's versions deleted": {Query: qDeleteVersion, Args: []any{"infra/1"}},
		"a team's entries deleted":  {Query: qDeleteEntries, Args: []any{"infra/1"}},
		"a team's events deleted":   {Query: qDeleteOwed, Args: []any{"infra/1"}},
	}
}

package sqlitestore

import "context"

// Plan answers the query plan of a statement, a line a step.
func (s *Store) Plan(ctx context.Context, query string, args ...any) ([]string, error) {
	return s.db.QueryPlan(ctx, query, args...)
}

// HotQueries are the statements of the hot paths with arguments of the right kinds: what a
// submit, a read, a list and a save of a workflow ask.
func HotQueries() map[string]struct {
	Query string
	Args  []any
} {
	type q = struct {
		Query string
		Args  []any
	}
	blob := []byte("{}")
	return map[string]q{
		"a catalog's head":          {qHeadSeq, []any{"infra/1"}},
		"a catalog":                 {qCatalog, []any{"infra/1"}},
		"move a head":               {qMoveHead, []any{2, "infra/1", 1}},
		"put a head's entry":        {qPutEntry, []any{"infra/1", "w", 1, nil, "active", nil, 0}},
		"remove an entry":           {qRemoveEntry, []any{"infra/1", "w"}},
		"a version's summary":       {qSummary, []any{"infra/1", "w", 1, 1}},
		"a version with its tasks":  {qRevision, []any{"infra/1", "w", 1, 1}},
		"store a version":           {qInsertRev, []any{"infra/1", "w", 1, 1, "a", "r", 0, blob, blob}},
		"collect a revision":        {qCollect, []any{"infra/1", "w", 1, 1}},
		"a team":                    {qFindTeam, []any{"infra"}},
		"reserve a workflow":        {qReserve, []any{"infra", "id", 100}},
		"release a workflow":        {qRelease, []any{"infra", "id"}},
		"the events owed":           {qOwed, []any{500}},
		"the events published":      {qPublished, []any{10}},
		"a team's versions deleted": {qDeleteVersion, []any{"infra/1"}},
		"a team's entries deleted":  {qDeleteEntries, []any{"infra/1"}},
		"a team's events deleted":   {qDeleteOwed, []any{"infra/1"}},
	}
}

package sqlitestore

import (
	"context"
	"time"

	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/sqlitex/sqlitextest"
	"github.com/baton-flow/baton/services/schedules/internal/app"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// Plan answers the query plan of a statement, a line a step.
func (s *Store) Plan(ctx context.Context, query string, args ...any) ([]string, error) {
	return s.db.QueryPlan(ctx, query, args...)
}

// HotQueries are the statements of the scheduler's and the use cases' paths.
func HotQueries() map[string]sqlitextest.Statement {
	type q = sqlitextest.Statement
	now := time.Now().UnixNano()
	set := []any{"team", "wf", "cron", "active", now, "", nil, nil, now, []byte("{}"), 2, nil, nil}
	out := map[string]q{
		"the schedules due and free":       {Query: qDue, Args: []any{now, now, 1000}},
		"claim the schedules due and free": {Query: qClaim, Args: []any{"r/1", now, now, now, 1000}},
		"check a claim":                    {Query: qHolds, Args: []any{"id", "r/1"}},
		"keep a claim":                     {Query: qKeep, Args: append(set, "id", "r/1")},
		"save on a version":                {Query: qSave, Args: append(set, "id", 1)},
		"read a schedule":                  {Query: qFind, Args: []any{"id"}},
		"nudge a buffered fire":            {Query: qNudge, Args: []any{now, now, "id", "run"}},
		"a workflow's schedules":           {Query: qWorkflow, Args: []any{"team", "wf"}},
		"delete a team's":                  {Query: qDeleteTeam, Args: []any{"team"}},
	}
	for name, f := range map[string]app.Filter{
		"a team's schedules":    {Team: "team"},
		"a team's, filtered":    {Team: "team", Statuses: []domain.Status{domain.StatusActive}, Types: []domain.Type{domain.TypeCron}},
		"a team's, by workflow": {Team: "team", Workflows: []string{"a", "b"}},
		"a team's, by id":       {Team: "team", IDs: []string{"a", "b"}},
	} {
		query, args := searchQuery(f, page.Request{Size: 10})
		out[name] = q{Query: query, Args: args}
		count, args := countQuery(f)
		out["count "+name] = q{Query: count, Args: args}
	}
	return out
}

package sqlitestore

import (
	"context"
	"time"

	"github.com/baton-flow/baton/libs/sqlitex/sqlitextest"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Plan answers the query plan of a statement, a line a step.
func (s *Store) Plan(ctx context.Context, query string, args ...any) ([]string, error) {
	return s.db.QueryPlan(ctx, query, args...)
}

// HotQueries are the statements of the hot paths with arguments of the right kinds.
func HotQueries() map[string]sqlitextest.Statement {
	type q = sqlitextest.Statement
	out := map[string]q{
		"load a run":             {Query: qFindRun, Args: []any{"r"}},
		"load its task runs":     {Query: qTaskRuns, Args: []any{"r"}},
		"load a task run":        {Query: qTaskRun, Args: []any{"r", 1}},
		"load its definition":    {Query: qDefinition, Args: []any{"sha256:x"}},
		"save a task run":        {Query: qSaveTask, Args: []any{[]byte("{}"), "r", 1, 3}},
		"check a run's version":  {Query: qRunVersion, Args: []any{"r"}},
		"save a run":             {Query: qSaveRun, Args: []any{"s", "p", 1, 2, "o", false, 3, []byte("{}"), "r", 4}},
		"the queued attempts":    {Query: qFindQueued, Args: []any{"team", "queue", 10}},
		"the runs owing events":  {Query: qFindOwed, Args: []any{int64(1), 10}},
		"a slot held":            {Query: qSlotHeld, Args: []any{"team", "r"}},
		"the slots taken":        {Query: qSlotsTaken, Args: []any{"team"}},
		"a task run's heartbeat": {Query: qHeartbeat, Args: []any{"r.1"}},
	}
	for name, f := range map[string]domain.InFlightFilter{
		"the runs due of a replica":          {Owners: []string{"a"}, WakeBefore: time.Now()},
		"the runs of dead replicas":          {Owners: []string{"a", "b"}},
		"the runs waiting for slot":          {Queued: true},
		"a team's runs waiting of a replica": {Owners: []string{"a"}, Team: "t", Queued: true},
		"the child runs of a replica":        {Owners: []string{"a"}, Children: true},
	} {
		query, args := inFlightQuery(f)
		out[name] = q{Query: query, Args: args}
	}
	return out
}

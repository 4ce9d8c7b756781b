package sqlitestore

import (
	"context"
	"strings"
	"time"

	"github.com/baton-flow/baton/services/runs/internal/domain"
)

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
		out = append(out, strings.TrimSpace(detail))
	}
	return out, rows.Err()
}

// HotQueries are the statements of the hot paths with arguments of the right kinds.
func HotQueries() map[string]struct {
	Query string
	Args  []any
} {
	type q = struct {
		Query string
		Args  []any
	}
	out := map[string]q{
		"load a run":             {qFindRun, []any{"r"}},
		"load its task runs":     {qTaskRuns, []any{"r"}},
		"load a task run":        {qTaskRun, []any{"r", 1}},
		"load its definition":    {qDefinition, []any{"sha256:x"}},
		"save a task run":        {qSaveTask, []any{[]byte("{}"), "r", 1, 3}},
		"check a run's version":  {qRunVersion, []any{"r"}},
		"save a run":             {qSaveRun, []any{"s", "p", 1, 2, "o", false, 3, []byte("{}"), "r", 4}},
		"the queued attempts":    {qFindQueued, []any{"team", "queue", 10}},
		"the runs owing events":  {qFindOwed, []any{int64(1), 10}},
		"a slot held":            {qSlotHeld, []any{"team", "r"}},
		"the slots taken":        {qSlotsTaken, []any{"team"}},
		"a task run's heartbeat": {qHeartbeat, []any{"r.1"}},
	}
	for name, f := range map[string]domain.InFlightFilter{
		"the runs due of a replica":          {Owners: []string{"a"}, WakeBefore: time.Now()},
		"the runs of dead replicas":          {Owners: []string{"a", "b"}},
		"the runs waiting for slot":          {Queued: true},
		"a team's runs waiting of a replica": {Owners: []string{"a"}, Team: "t", Queued: true},
		"the child runs of a replica":        {Owners: []string{"a"}, Children: true},
	} {
		query, args := inFlightQuery(f)
		out[name] = q{query, args}
	}
	return out
}

package mongostore

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// HasLiveRuns reports whether any run of team is still in flight, or ended and not yet put
// away.
func (s *Store) HasLiveRuns(ctx context.Context, team string) (bool, error) {
	n, err := s.live.CountDocuments(ctx, bson.M{"team": team}, options.Count().SetLimit(1))
	if err != nil {
		return false, fmt.Errorf("count live runs of %s: %w", team, err)
	}
	return n > 0, nil
}

// DeleteTeamRuns removes team's runs that ended, with their task runs, logs and
// heartbeats. A run's parts go before the run, so a delete cut short is completed by the
// next one, which still finds the run.
func (s *Store) DeleteTeamRuns(ctx context.Context, team string) error {
	all, err := findIDs(ctx, s.runs, bson.M{"team": team})
	if err != nil {
		return fmt.Errorf("list runs of %s: %w", team, err)
	}
	for from := 0; from < len(all); from += maxBatch {
		ids := all[from:min(len(all), from+maxBatch)]
		quoted := make([]string, len(ids))
		for i, id := range ids {
			quoted[i] = regexp.QuoteMeta(id)
		}
		// Task-run ids, and so their logs' and heartbeats' ids, start with "<run id>.".
		ofTasks := bson.M{"_id": bson.M{"$regex": "^(" + strings.Join(quoted, "|") + `)\.`}}
		for _, del := range []struct {
			coll   *mongo.Collection
			filter bson.M
		}{
			{s.archivedPages, bson.M{"runId": bson.M{"$in": ids}}},
			{s.logs, ofTasks},
			{s.beats, ofTasks},
			{s.runs, bson.M{"_id": bson.M{"$in": ids}}},
		} {
			if _, err := del.coll.DeleteMany(ctx, del.filter); err != nil {
				return fmt.Errorf("delete runs of %s from %s: %w", team, del.coll.Name(), err)
			}
		}
	}
	return nil
}

// DeleteTeamQuotas forgets team's concurrency slots and monthly counts.
func (s *Store) DeleteTeamQuotas(ctx context.Context, team string) error {
	filter := bson.M{"_id": bson.M{"$regex": "^(slots|month)/" + regexp.QuoteMeta(team) + "($|/)"}}
	if _, err := s.counters.DeleteMany(ctx, filter); err != nil {
		return fmt.Errorf("delete the counters of %s: %w", team, err)
	}
	if _, err := s.slots.DeleteMany(ctx, bson.M{"team": team}); err != nil {
		return fmt.Errorf("delete the slots of %s: %w", team, err)
	}
	s.slotDocs.Delete(slotCounterID(team))
	return nil
}

// DeleteTeamKeys forgets team's idempotency keys.
func (s *Store) DeleteTeamKeys(ctx context.Context, team string) error {
	if _, err := s.idem.DeleteMany(ctx, bson.M{"_id": bson.M{"$regex": "^" + regexp.QuoteMeta(team) + "/"}}); err != nil {
		return fmt.Errorf("delete the idempotency keys of %s: %w", team, err)
	}
	return nil
}

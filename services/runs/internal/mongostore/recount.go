package mongostore

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// RecountSlots writes every team's concurrency slots again (slots.go) from its runs in
// flight, and answers how many runs hold one. A run holds a slot from before it is stored
// started until its end is stored: the runs in flight that are started, not queued, not
// ended and not sharing their tree's slot. Each team's set becomes those runs, its count
// their number, with nothing pending.
//
// It must run while no replica of the service uses the database. Standalone mode calls it
// at start on a data directory whose embedded database holds the runs of an earlier
// version: that version's process kept the slots in memory, read from the runs in flight,
// and left the documents as they were before. Run again, it writes the same; cut short by
// a crash, the next start writes them all.
func (s *Store) RecountSlots(ctx context.Context) (int, error) {
	cur, err := s.live.Find(ctx, bson.M{"phase": notEnded, "queued": bson.M{"$ne": true}, "sharesSlot": bson.M{"$ne": true}},
		options.Find().SetProjection(bson.M{"_id": 1, "team": 1}))
	var held []struct {
		ID   string `bson:"_id"`
		Team string `bson:"team"`
	}
	if err == nil {
		err = cur.All(ctx, &held)
	}
	if err != nil {
		return 0, fmt.Errorf("read the runs holding a slot: %w", err)
	}
	counts := map[string]int{}
	docs := make([]any, 0, len(held))
	for _, h := range held {
		counts[h.Team]++
		docs = append(docs, bson.M{"_id": slotID(h.Team, h.ID), "team": h.Team})
	}
	// Every team with a count, held or not: a count left from before is set to zero.
	cur, err = s.counters.Find(ctx, bson.M{"_id": bson.M{"$regex": "^slots/"}}, options.Find().SetProjection(bson.M{"_id": 1}))
	var counters []struct {
		ID string `bson:"_id"`
	}
	if err == nil {
		err = cur.All(ctx, &counters)
	}
	if err != nil {
		return 0, fmt.Errorf("read the slot counts: %w", err)
	}
	for _, c := range counters {
		if team := strings.TrimPrefix(c.ID, "slots/"); counts[team] == 0 {
			counts[team] = 0
		}
	}
	if _, err := s.slots.DeleteMany(ctx, bson.M{}); err != nil {
		return 0, fmt.Errorf("clear the slots: %w", err)
	}
	if len(docs) > 0 {
		if _, err := s.slots.InsertMany(ctx, docs); err != nil {
			return 0, fmt.Errorf("write the slots: %w", err)
		}
	}
	for team, n := range counts {
		if _, err := s.counters.ReplaceOne(ctx, bson.M{"_id": slotCounterID(team)}, bson.M{"n": n},
			options.Replace().SetUpsert(true)); err != nil {
			return 0, fmt.Errorf("write the slot count of %s: %w", team, err)
		}
		s.slotDocs.Store(slotCounterID(team), struct{}{})
	}
	return len(held), nil
}

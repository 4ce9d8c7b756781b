package mongostore

import (
	"context"
	"fmt"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// An exclusive store (the standalone process, its database's only writer) keeps each
// team's concurrency slots in memory instead of in the counter and set documents of
// slots.go, which cost three writes to take a slot and three to give it back — on the
// embedded database a third of the writes of a run in flight.
//
// What is held needs no record of its own: a run holds a slot from before it is stored
// started until its end is, and the stored run says which of the two it is. So the set
// of a team is read once per process, at its first use, from the team's runs in flight
// that are started, not queued, not ended and not sharing their tree's slot. A crash in
// between loses nothing: a slot taken for a run not stored started yet was not taken
// (the run is stored queued, or not at all), and one given back for a run stored ended
// is counted free (its next load ends it again, which gives it back again, harmlessly).

// memSlots are the teams' sets, each read at its first use.
type memSlots struct {
	mu    sync.Mutex
	teams map[string]*teamSlots
}

// teamSlots is one team's set; its lock is held across a call on it, reading included.
type teamSlots struct {
	mu     sync.Mutex
	loaded bool
	runs   map[string]struct{}
}

// onMemTeam runs fn on team's set, under its lock, reading the set from the runs in
// flight at its first use.
func (s *Store) onMemTeam(ctx context.Context, team string, fn func(runs map[string]struct{})) error {
	s.mem.mu.Lock()
	if s.mem.teams == nil {
		s.mem.teams = map[string]*teamSlots{}
	}
	ts := s.mem.teams[team]
	if ts == nil {
		ts = &teamSlots{}
		s.mem.teams[team] = ts
	}
	s.mem.mu.Unlock()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !ts.loaded {
		cur, err := s.live.Find(ctx, bson.M{"team": team, "phase": notEnded, "queued": bson.M{"$ne": true}, "sharesSlot": bson.M{"$ne": true}},
			options.Find().SetProjection(bson.M{"_id": 1}))
		var held []struct {
			ID string `bson:"_id"`
		}
		if err == nil {
			err = cur.All(ctx, &held)
		}
		if err != nil {
			return fmt.Errorf("read the runs of %s holding a slot: %w", team, err)
		}
		ts.runs = make(map[string]struct{}, len(held))
		for _, h := range held {
			ts.runs[h.ID] = struct{}{}
		}
		ts.loaded = true
	}
	fn(ts.runs)
	return nil
}

func (s *Store) acquireMemSlot(ctx context.Context, team, run string, max int) (bool, error) {
	got := false
	err := s.onMemTeam(ctx, team, func(runs map[string]struct{}) {
		if _, held := runs[run]; held || len(runs) < max {
			runs[run], got = struct{}{}, true
		}
	})
	return got, err
}

func (s *Store) releaseMemSlot(ctx context.Context, team, run string) error {
	return s.onMemTeam(ctx, team, func(runs map[string]struct{}) { delete(runs, run) })
}

func (s *Store) memSlotsTaken(ctx context.Context, team string) (int, error) {
	n := 0
	err := s.onMemTeam(ctx, team, func(runs map[string]struct{}) { n = len(runs) })
	return n, err
}

// forgetMemSlots drops team's set: a deleted team's runs are gone, and a team made again
// under its name starts from its own.
func (s *Store) forgetMemSlots(team string) {
	s.mem.mu.Lock()
	defer s.mem.mu.Unlock()
	delete(s.mem.teams, team)
}

package mongostore

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/mongox"
)

// A team's concurrency slots are a count and a set. The count is a counter document
// ("slots/<team>": n), the set one small document per run holding a slot (the slots
// collection, "<team>/<run>"): a set kept in one document would be read and written whole
// at every run's start and end, thousands of ids when runs wait on people.
//
// Counting and joining the set are two writes, which no transaction joins (FerretDB has
// none). So the counter document also names the runs whose count moved and whose set
// membership has not yet followed (pending.<run>: "acquire" or "release"), in the same
// write as the count: a call for the same run finishes what a crash left half done, and a
// run's slot is never counted twice nor lost. Pending entries live for the two writes.
//
// A call reads the set, then moves the count on what it read: the calls for one run are
// taken one at a time (slotLocks), or a release that read the run in the set before
// another release of it ended would uncount it again. (Two replicas releasing one run at
// once, which a takeover could make, are not kept apart.)

const (
	pendingAcquire = "acquire"
	pendingRelease = "release"
)

// slotCounter is a team's counter document.
type slotCounter struct {
	N       int               `bson:"n"`
	Pending map[string]string `bson:"pending"`
}

func slotCounterID(team string) string { return "slots/" + team }

func slotID(team, run string) string { return team + "/" + run }

// pendingKey is the field of run's pending entry; run ids are UUIDs, free of dots.
func pendingKey(run string) string { return "pending." + run }

// AcquireSlot gives run one of team's max concurrency slots; false when all are taken.
// Acquiring twice holds one slot.
func (s *Store) AcquireSlot(ctx context.Context, team, run string, max int) (bool, error) {
	mu := s.slotLocks.of(slotID(team, run))
	mu.Lock()
	defer mu.Unlock()
	id := slotCounterID(team)
	if _, known := s.slotDocs.Load(id); !known {
		if _, err := s.counters.UpdateOne(ctx, bson.M{"_id": id}, bson.M{"$setOnInsert": bson.M{"n": 0}},
			options.UpdateOne().SetUpsert(true)); err != nil && !mongox.IsDuplicateKey(err) {
			return false, fmt.Errorf("slots of %s: %w", team, err)
		}
		s.slotDocs.Store(id, struct{}{})
	}
	held, err := s.holdsSlot(ctx, team, run)
	if err != nil {
		return false, err
	}
	if held {
		// Held, unless a call for the run was cut short: finish it first.
		c, err := s.slotCounter(ctx, team)
		if err != nil {
			return false, err
		}
		switch c.Pending[run] {
		case pendingAcquire:
			return true, s.settle(ctx, team, run)
		case pendingRelease:
			if err := s.finishRelease(ctx, team, run); err != nil {
				return false, err
			}
		default:
			return true, nil
		}
	}
	res, err := s.counters.UpdateOne(ctx,
		bson.M{"_id": id, "n": bson.M{"$lt": max}, pendingKey(run): bson.M{"$exists": false}},
		bson.M{"$inc": bson.M{"n": 1}, "$set": bson.M{pendingKey(run): pendingAcquire}})
	if err != nil {
		return false, fmt.Errorf("acquire a slot of %s: %w", team, err)
	}
	if res.MatchedCount == 0 {
		// All taken, or a call for this run was cut short: finish it and answer by it.
		c, err := s.slotCounter(ctx, team)
		if err != nil {
			return false, err
		}
		switch c.Pending[run] {
		case pendingAcquire:
		case pendingRelease:
			if err := s.finishRelease(ctx, team, run); err != nil {
				return false, err
			}
			return false, nil
		default:
			return false, nil
		}
	}
	if err := s.finishAcquire(ctx, team, run); err != nil {
		return false, err
	}
	return true, nil
}

// finishAcquire adds run, counted already, to team's set.
func (s *Store) finishAcquire(ctx context.Context, team, run string) error {
	if _, err := s.slots.InsertOne(ctx, bson.M{"_id": slotID(team, run), "team": team}); err != nil && !mongox.IsDuplicateKey(err) {
		return fmt.Errorf("acquire a slot of %s: %w", team, err)
	}
	return s.settle(ctx, team, run)
}

// finishRelease takes run, uncounted already, out of team's set.
func (s *Store) finishRelease(ctx context.Context, team, run string) error {
	if _, err := s.slots.DeleteOne(ctx, bson.M{"_id": slotID(team, run)}); err != nil {
		return fmt.Errorf("release the slot of %s: %w", run, err)
	}
	return s.settle(ctx, team, run)
}

// settle drops run's pending entry, its set membership done.
func (s *Store) settle(ctx context.Context, team, run string) error {
	if _, err := s.counters.UpdateOne(ctx, bson.M{"_id": slotCounterID(team)}, bson.M{"$unset": bson.M{pendingKey(run): ""}}); err != nil {
		return fmt.Errorf("slots of %s: %w", team, err)
	}
	return nil
}

// holdsSlot reports whether run is in team's set. (Read by _id alone: FerretDB looks a
// document up by its index for no other query.)
func (s *Store) holdsSlot(ctx context.Context, team, run string) (bool, error) {
	_, err := mongox.FindOne[bson.M](ctx, s.slots, bson.M{"_id": slotID(team, run)}, options.FindOne().SetProjection(bson.M{"_id": 1}))
	if errors.Is(err, mongox.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the slot of %s: %w", run, err)
	}
	return true, nil
}

// ReleaseSlot frees run's slot, if it holds one; releasing twice is harmless.
func (s *Store) ReleaseSlot(ctx context.Context, team, run string) error {
	mu := s.slotLocks.of(slotID(team, run))
	mu.Lock()
	defer mu.Unlock()
	c, err := s.slotCounter(ctx, team)
	if err != nil {
		return err
	}
	switch c.Pending[run] {
	case pendingRelease:
		return s.finishRelease(ctx, team, run)
	case pendingAcquire:
		// Counted, its set membership cut short: complete it, then release it.
		if err := s.finishAcquire(ctx, team, run); err != nil {
			return err
		}
	}
	held, err := s.holdsSlot(ctx, team, run)
	if err != nil || !held {
		return err
	}
	res, err := s.counters.UpdateOne(ctx, bson.M{"_id": slotCounterID(team), pendingKey(run): bson.M{"$exists": false}},
		bson.M{"$inc": bson.M{"n": -1}, "$set": bson.M{pendingKey(run): pendingRelease}})
	if err != nil {
		return fmt.Errorf("release the slot of %s: %w", run, err)
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("release the slot of %s: another call is releasing it", run)
	}
	return s.finishRelease(ctx, team, run)
}

// slotCounter reads team's counter document; none is an empty one.
func (s *Store) slotCounter(ctx context.Context, team string) (slotCounter, error) {
	var c slotCounter
	err := s.counters.FindOne(ctx, bson.M{"_id": slotCounterID(team)}).Decode(&c)
	if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return c, fmt.Errorf("read slots of %s: %w", team, err)
	}
	return c, nil
}

// SlotsTaken reads how many of team's concurrency slots are held.
func (s *Store) SlotsTaken(ctx context.Context, team string) (int, error) {
	c, err := s.slotCounter(ctx, team)
	return c.N, err
}

// migrateSlots moves the sets that older versions kept in the counter documents
// (runs: [...]) to the slots collection, each counter's count unchanged.
func (s *Store) migrateSlots(ctx context.Context) error {
	cur, err := s.counters.Find(ctx, bson.M{"_id": bson.M{"$regex": "^slots/"}, "runs": bson.M{"$exists": true}})
	if err != nil {
		return fmt.Errorf("find slot sets to move: %w", err)
	}
	var docs []struct {
		ID   string   `bson:"_id"`
		Runs []string `bson:"runs"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return fmt.Errorf("read slot sets to move: %w", err)
	}
	for _, d := range docs {
		team := d.ID[len("slots/"):]
		for _, run := range d.Runs {
			if _, err := s.slots.InsertOne(ctx, bson.M{"_id": slotID(team, run), "team": team}); err != nil && !mongox.IsDuplicateKey(err) {
				return fmt.Errorf("move the slots of %s: %w", team, err)
			}
		}
		if _, err := s.counters.UpdateOne(ctx, bson.M{"_id": d.ID}, bson.M{"$unset": bson.M{"runs": ""}}); err != nil {
			return fmt.Errorf("move the slots of %s: %w", team, err)
		}
	}
	return nil
}

// Package outbox publishes the events a state change owes. The owing document carries them
// in an `outbox` array written by the same single-document update that changes its state,
// so a crash can never separate the change from its events (the embedded store has no
// transactions). A Relay publishes the entries and pulls each once the broker acknowledged
// it; a relay that dies midway publishes again on restart, and consumers drop the
// duplicate by the event's id.
package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/events"
)

// Field is the name of the array of pending entries in an owing document.
const Field = "outbox"

// Entry is one event a document owes, stored as its marshaled CloudEvent.
type Entry struct {
	ID    string `bson:"id"`
	Topic string `bson:"topic"`
	Key   string `bson:"key"`
	Event []byte `bson:"event"`
}

// NewEntry makes the entry for e, to be published on topic (unprefixed) with key.
func NewEntry(topic, key string, e event.Event) (Entry, error) {
	raw, err := events.Marshal(e)
	if err != nil {
		return Entry{}, fmt.Errorf("outbox entry %s: %w", e.ID(), err)
	}
	return Entry{ID: e.ID(), Topic: topic, Key: key, Event: raw}, nil
}

// Publisher sends one event and returns once the broker acknowledged it.
type Publisher interface {
	Publish(ctx context.Context, topic, key string, e event.Event) error
}

// Relay drains the outbox arrays of one collection.
type Relay struct {
	coll      *mongo.Collection
	publisher Publisher
	log       *slog.Logger
	nudge     chan struct{}
	// Purge, when set, selects documents that are tombstones: once their outbox is empty
	// they are deleted, so a deletion's event is published before its record goes.
	purge    bson.M
	interval time.Duration
}

// Config shapes a Relay.
type Config struct {
	// Interval between sweeps when nothing nudges the relay; default 1s. Sweeps pick up
	// entries a crashed process left behind.
	Interval time.Duration
	// Purge selects tombstone documents to delete once drained (optional).
	Purge  bson.M
	Logger *slog.Logger
}

// NewRelay returns a relay over coll.
func NewRelay(coll *mongo.Collection, publisher Publisher, cfg Config) *Relay {
	if cfg.Interval == 0 {
		cfg.Interval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Relay{coll: coll, publisher: publisher, log: cfg.Logger, nudge: make(chan struct{}, 1),
		purge: cfg.Purge, interval: cfg.Interval}
}

// Nudge asks for a sweep now; writers call it after storing entries so events leave at once.
func (r *Relay) Nudge() {
	select {
	case r.nudge <- struct{}{}:
	default:
	}
}

// Run sweeps until ctx ends.
func (r *Relay) Run(ctx context.Context) error {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		if err := r.Sweep(ctx); err != nil && ctx.Err() == nil {
			r.log.WarnContext(ctx, "outbox sweep failed", "collection", r.coll.Name(), "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-r.nudge:
		}
	}
}

type owing struct {
	ID     any     `bson:"_id"`
	Outbox []Entry `bson:"outbox"`
}

// Sweep publishes every pending entry of the collection once.
func (r *Relay) Sweep(ctx context.Context) error {
	cur, err := r.coll.Find(ctx, bson.M{Field + ".0": bson.M{"$exists": true}},
		options.Find().SetProjection(bson.M{Field: 1}).SetLimit(500))
	if err != nil {
		return fmt.Errorf("find owing documents: %w", err)
	}
	var docs []owing
	if err := cur.All(ctx, &docs); err != nil {
		return fmt.Errorf("read owing documents: %w", err)
	}
	var errs []error
	for _, d := range docs {
		if err := r.drain(ctx, d); err != nil {
			errs = append(errs, err)
		}
	}
	if r.purge != nil {
		filter := bson.M{Field: bson.M{"$size": 0}}
		for k, v := range r.purge {
			filter[k] = v
		}
		if _, err := r.coll.DeleteMany(ctx, filter); err != nil {
			errs = append(errs, fmt.Errorf("purge drained tombstones: %w", err))
		}
	}
	return errors.Join(errs...)
}

func (r *Relay) drain(ctx context.Context, d owing) error {
	for _, entry := range d.Outbox {
		e, err := events.Unmarshal(entry.Event)
		if err != nil {
			// A malformed entry can never be published; drop it loudly rather than
			// block every later event of the document.
			r.log.ErrorContext(ctx, "dropping malformed outbox entry", "id", entry.ID, "error", err)
		} else if err := r.publisher.Publish(ctx, entry.Topic, entry.Key, e); err != nil {
			return fmt.Errorf("publish %s: %w", entry.ID, err)
		}
		// Entries leave in order, so the published one is the first: pop it, but only if it
		// still is (FerretDB's $pull matches whole values only, not conditions).
		if _, err := r.coll.UpdateOne(ctx, bson.M{"_id": d.ID, Field + ".0.id": entry.ID},
			bson.M{"$pop": bson.M{Field: -1}}); err != nil {
			return fmt.Errorf("clear outbox entry %s: %w", entry.ID, err)
		}
	}
	return nil
}

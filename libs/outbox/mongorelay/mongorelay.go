// Package mongorelay is the MongoDB side of package outbox: a Relay drains the outbox arrays
// of one collection, publishing each entry in order and popping it once the broker
// acknowledged it. Sweeps run when nudged and on an interval, so entries a crashed process
// left behind are published too.
package mongorelay

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
	"github.com/baton-flow/baton/libs/outbox"
)

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
	ID     any            `bson:"_id"`
	Outbox []outbox.Entry `bson:"outbox"`
}

// Sweep publishes every pending entry of the collection once.
func (r *Relay) Sweep(ctx context.Context) error {
	cur, err := r.coll.Find(ctx, bson.M{outbox.Field + ".0": bson.M{"$exists": true}},
		options.Find().SetProjection(bson.M{outbox.Field: 1}).SetLimit(500))
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
		filter := bson.M{outbox.Field: bson.M{"$size": 0}}
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
		if _, err := r.coll.UpdateOne(ctx, bson.M{"_id": d.ID, outbox.Field + ".0.id": entry.ID},
			bson.M{"$pop": bson.M{outbox.Field: -1}}); err != nil {
			return fmt.Errorf("clear outbox entry %s: %w", entry.ID, err)
		}
	}
	return nil
}

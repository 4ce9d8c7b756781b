package sqlitestore

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/sqlitex"
)

// Publisher sends one event and returns once the broker acknowledged it.
type Publisher interface {
	Publish(ctx context.Context, topic, key string, e event.Event) error
}

// relayBatch bounds the events one sweep reads.
const relayBatch = 500

// Relay publishes the events catalog changes owe (the outbox table), in the order they
// were stored, and deletes them once the broker acknowledged them. It sweeps when nudged
// (a change stored events) and on an interval, so events a crashed process left behind
// are published too; an event published again after a crash is dropped by its consumers
// by its id.
type Relay struct {
	s         *Store
	publisher Publisher
	log       *slog.Logger
	interval  time.Duration
}

// Relay returns the store's relay; interval defaults to a second.
func (s *Store) Relay(publisher Publisher, interval time.Duration, log *slog.Logger) *Relay {
	if interval <= 0 {
		interval = time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	return &Relay{s: s, publisher: publisher, log: log, interval: interval}
}

// Nudge asks the relay for a sweep now.
func (s *Store) Nudge() {
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

// Nudge asks for a sweep now.
func (r *Relay) Nudge() { r.s.Nudge() }

// Run sweeps until ctx ends.
func (r *Relay) Run(ctx context.Context) error {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		if err := r.Sweep(ctx); err != nil && ctx.Err() == nil {
			r.log.WarnContext(ctx, "outbox sweep failed", "store", "sqlite", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-r.s.nudge:
		}
	}
}

type owed struct {
	seq            int64
	id, topic, key string
	event          []byte
}

// Sweep publishes the events owed, oldest first, until none is left or one fails; those
// published are deleted in one write.
func (r *Relay) Sweep(ctx context.Context) error {
	for {
		batch, err := r.owed(ctx)
		if err != nil || len(batch) == 0 {
			return err
		}
		var done int64
		var failed error
		for _, o := range batch {
			e, err := events.Unmarshal(o.event)
			if err != nil {
				// A malformed entry can never be published; drop it loudly rather than
				// block every later event.
				r.log.ErrorContext(ctx, "dropping malformed outbox entry", "id", o.id, "error", err)
			} else if err := r.publisher.Publish(ctx, o.topic, o.key, e); err != nil {
				failed = fmt.Errorf("publish %s: %w", o.id, err)
				break
			}
			done = o.seq
		}
		if done > 0 {
			err := r.s.db.Write(ctx, func(tx *sqlitex.Tx) error {
				_, err := tx.Exec(qPublished, done)
				return err
			})
			if err != nil {
				return fmt.Errorf("clear published events: %w", err)
			}
		}
		if failed != nil || len(batch) < relayBatch {
			return failed
		}
	}
}

func (r *Relay) owed(ctx context.Context) ([]owed, error) {
	rows, err := r.s.db.Query(ctx, qOwed, relayBatch)
	if err != nil {
		return nil, fmt.Errorf("read owed events: %w", err)
	}
	defer rows.Close()
	var out []owed
	for rows.Next() {
		var o owed
		if err := rows.Scan(&o.seq, &o.id, &o.topic, &o.key, &o.event); err != nil {
			return nil, fmt.Errorf("read owed events: %w", err)
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

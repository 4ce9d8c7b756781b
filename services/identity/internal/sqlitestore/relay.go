package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/libs/sqlitex"
)

// relayBatch bounds the events one sweep reads.
const relayBatch = 500

// insertOutbox stores the events a change owes, in the change's transaction.
func insertOutbox(tx *sqlitex.Tx, entries []outbox.Entry) error {
	for _, e := range entries {
		if _, err := tx.Exec(`INSERT INTO outbox (event_id, topic, key, event) VALUES (?, ?, ?, ?)`,
			e.ID, e.Topic, e.Key, e.Event); err != nil {
			return fmt.Errorf("store event %s: %w", e.ID, err)
		}
	}
	return nil
}

// Nudge asks the relay for a sweep now; the store calls it after storing events.
func (s *Store) Nudge() {
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

// Publisher sends one event and returns once the broker acknowledged it.
type Publisher interface {
	Publish(ctx context.Context, topic, key string, e event.Event) error
}

// Relay publishes the team events of a Store in the order they were stored, deleting each
// once the broker acknowledged it. It sweeps when nudged and on an interval, so events a
// crashed process left behind are published too (again, perhaps: consumers drop a
// duplicate by the event's id).
type Relay struct {
	store     *Store
	publisher Publisher
	log       *slog.Logger
	interval  time.Duration
}

// NewRelay returns the relay of s's events; interval 0 is a second.
func NewRelay(s *Store, publisher Publisher, interval time.Duration, log *slog.Logger) *Relay {
	if interval <= 0 {
		interval = time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	return &Relay{store: s, publisher: publisher, log: log, interval: interval}
}

// Nudge asks for a sweep now.
func (r *Relay) Nudge() { r.store.Nudge() }

// Run sweeps until ctx ends.
func (r *Relay) Run(ctx context.Context) error {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		if err := r.Sweep(ctx); err != nil && ctx.Err() == nil {
			r.log.WarnContext(ctx, "outbox sweep failed", "store", "identity", "error", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-r.store.nudge:
		}
	}
}

// Sweep publishes the pending events once, oldest first. It stops at the first that
// cannot be published, so that none overtakes an earlier one.
func (r *Relay) Sweep(ctx context.Context) error {
	rows, err := r.store.db.Query(ctx, `SELECT seq, event_id, topic, key, event FROM outbox ORDER BY seq LIMIT ?`, relayBatch)
	if err != nil {
		return fmt.Errorf("find owed events: %w", err)
	}
	type owed struct {
		seq   int64
		entry outbox.Entry
	}
	var pending []owed
	for rows.Next() {
		var o owed
		if err := rows.Scan(&o.seq, &o.entry.ID, &o.entry.Topic, &o.entry.Key, &o.entry.Event); err != nil {
			rows.Close()
			return fmt.Errorf("read owed events: %w", err)
		}
		pending = append(pending, o)
	}
	err = errors.Join(rows.Err(), rows.Close())
	if err != nil {
		return fmt.Errorf("read owed events: %w", err)
	}
	for _, o := range pending {
		e, err := events.Unmarshal(o.entry.Event)
		if err != nil {
			// A malformed entry can never be published; drop it loudly rather than block
			// every later event.
			r.log.ErrorContext(ctx, "dropping malformed outbox entry", "id", o.entry.ID, "error", err)
		} else if err := r.publisher.Publish(ctx, o.entry.Topic, o.entry.Key, e); err != nil {
			return fmt.Errorf("publish %s: %w", o.entry.ID, err)
		}
		if err := r.store.db.Write(ctx, func(tx *sqlitex.Tx) error {
			_, err := tx.Exec(`DELETE FROM outbox WHERE seq = ?`, o.seq)
			return err
		}); err != nil {
			return fmt.Errorf("clear outbox entry %s: %w", o.entry.ID, err)
		}
	}
	return nil
}

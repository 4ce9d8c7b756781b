// Package storetest is the contract every store of the integrations service keeps, as one
// suite of tests run against each implementation (mongostore on a MongoDB-wire server,
// sqlitestore on a SQLite file): what the chat and code-host apps, the inbound events'
// deduplication and the delivery of status events to sinks rely on, whatever keeps the
// data.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// Chat is the chat app's store, with the sweep of its expired records the service runs.
type Chat interface {
	app.ChatStore
	// Sweep removes the records expired by now.
	Sweep(ctx context.Context, now time.Time) error
}

// Receipts are the inbound events' records, with the purge the service runs.
type Receipts interface {
	app.Receipts
	// Purge removes the records made before since.
	Purge(ctx context.Context, since time.Time) error
}

// Deliveries are the sinks' queues, with the failures kept for operators.
type Deliveries interface {
	app.DeliveryStore
	// FindFailures answers the events given up on for run, by record id.
	FindFailures(ctx context.Context, run string) ([]domain.Failure, error)
}

// Stores are the ports of one implementation, over one empty database.
type Stores struct {
	Chat       Chat
	CodeHost   app.CodeHostStore
	Receipts   Receipts
	Deliveries Deliveries
}

// Harness makes the stores of one implementation.
type Harness struct {
	// New returns empty stores for one test; the chat store seals bot tokens.
	New func(t *testing.T) Stores
	// Reopen answers the stores a process started anew finds over the data of s, as
	// after a crash: what was answered as written must be there.
	Reopen func(t *testing.T, s Stores) Stores
	// AtRest answers everything stores keep, as bytes, as someone reading their files or
	// their database would see them.
	AtRest func(t *testing.T, s Stores) []byte
}

// Run runs the whole contract against the stores h makes.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		test func(t *testing.T, s Stores)
	}{
		{"a chat request's signature is new once", chatSignatures},
		{"chat installs, links and channels are read back as written, and missing ones are not found", chatRecords},
		{"a message posted is remembered, and an action's messages are kept one per channel", chatMessages},
		{"the chat records that expire are swept, the others kept", chatSweep},
		{"an installation is created and updated on the version it was read at, fn's error writing nothing", installations},
		{"concurrent updates of an installation are all kept", concurrentInstallationUpdates},
		{"a deleted team's links are removed, other teams' kept", unlinkTeam},
		{"a code-host delivery is recorded once a day, and purged after", codehostDeliveries},
		{"an inbound event's record names its first run, a twin's kept and an expired one replaced", receipts},
		{"records of inbound events created at once each get their answer", receiptsTogether},
		{"a delivery queue lives: recorded, claimed, held, postponed, advanced, deleted", deliveryQueue},
		{"a replica's queues are taken up once its lease lapses or it let go", deliveryTakeover},
		{"of replicas claiming one queue at once, one holds it", deliveryClaimRace},
		{"a dropped queue takes its events with it; the purge keeps what is young", deliveryDropAndPurge},
		{"concurrent writes of many queues each hold to their own condition", deliveryConcurrentWrites},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.test(t, h.New(t))
		})
	}
	t.Run("what was written is found by a process started anew", func(t *testing.T) {
		t.Parallel()
		durable(t, h)
	})
	t.Run("bot tokens are sealed at rest", func(t *testing.T) {
		t.Parallel()
		sealedAtRest(t, h)
	})
}

// at is a time every store keeps exactly: UTC, to the millisecond.
var at = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

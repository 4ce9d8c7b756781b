// Package outbox is the shape of the events a state change owes. The owing document carries
// them in an `outbox` array (Field) written by the same single-document update that changes
// its state, so a crash can never separate the change from its events (the embedded store
// has no transactions). A relay (package mongorelay) publishes the entries and pulls each
// once the broker acknowledged it; a relay that dies midway publishes again on restart, and
// consumers drop the duplicate by the event's id.
//
// This package holds only the entry itself, so that application code can build the events
// it owes without depending on a database driver.
package outbox

import (
	"fmt"

	"github.com/cloudevents/sdk-go/v2/event"

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

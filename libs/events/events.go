package events

import (
	"errors"
	"fmt"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
)

// ContentType is the media type of an envelope in structured mode (the whole event as JSON).
const ContentType = "application/cloudevents+json"

// DataContentType is the media type of every event's data.
const DataContentType = "application/json"

// ErrNoData is returned by Decode for an event that carries no data.
var ErrNoData = errors.New("event has no data")

// Source is the CloudEvent source of events emitted by service, e.g. "/baton/identity".
func Source(service string) string {
	return "/baton/" + service
}

// New builds a valid event timed now. id must be stable for the fact it reports (derived
// from the record and its version, or stored with the outbox entry) so that a re-publish
// carries the same id and consumers drop it. data is encoded as JSON; a json.RawMessage is
// taken as already encoded.
func New(id, source, typ, subject string, data any) (event.Event, error) {
	e := event.New(event.CloudEventsVersionV1)
	e.SetID(id)
	e.SetSource(source)
	e.SetType(typ)
	if subject != "" {
		e.SetSubject(subject)
	}
	e.SetTime(time.Now().UTC())
	if err := e.SetData(DataContentType, data); err != nil {
		return event.Event{}, fmt.Errorf("encode %s data: %w", typ, err)
	}
	if err := e.Validate(); err != nil {
		return event.Event{}, fmt.Errorf("invalid %s event %q: %w", typ, id, err)
	}
	return e, nil
}

// Decode reads the JSON data of e into a T. Unknown fields are ignored so that producers can
// add fields before every consumer knows them.
func Decode[T any](e event.Event) (T, error) {
	var v T
	if len(e.Data()) == 0 {
		return v, fmt.Errorf("decode %s event %q: %w", e.Type(), e.ID(), ErrNoData)
	}
	if err := e.DataAs(&v); err != nil {
		return v, fmt.Errorf("decode %s event %q: %w", e.Type(), e.ID(), err)
	}
	return v, nil
}

// Marshal validates e and encodes it in structured JSON mode.
func Marshal(e event.Event) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("invalid event %q: %w", e.ID(), err)
	}
	// The event's own encoder, not json.Marshal, which would scan its output again to
	// compact it: events are encoded once per publish, on every status change.
	b, err := e.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("marshal event %q: %w", e.ID(), err)
	}
	return b, nil
}

// Unmarshal decodes an event in structured JSON mode and validates it.
func Unmarshal(b []byte) (event.Event, error) {
	e := event.New()
	// The event's own decoder, not json.Unmarshal, which would scan the input whole
	// before handing it over: every consumer group decodes every event of its topics.
	if err := e.UnmarshalJSON(b); err != nil {
		return event.Event{}, fmt.Errorf("unmarshal event: %w", err)
	}
	if err := e.Validate(); err != nil {
		return event.Event{}, fmt.Errorf("invalid event %q: %w", e.ID(), err)
	}
	return e, nil
}

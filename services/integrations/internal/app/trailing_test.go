package app

import (
	"encoding/json"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
)

// TestJSONWithDataAfterItIsRefused: a webhook's payload, an event's JSON data and a
// code-host delivery are one JSON value; what follows it is refused, not dropped.
func TestJSONWithDataAfterItIsRefused(t *testing.T) {
	t.Parallel()
	for _, give := range []string{`{"x":1}}}garbage`, `{"x":1}]`, `{"x":1} {"y":2}`, `[1]]`} {
		t.Run(give, func(t *testing.T) {
			t.Parallel()
			_, err := DecodeJSON([]byte(give))
			assert.True(t, apperr.HasReason(err, apperr.RequestInvalid), "webhook payload: %v", err)

			_, err = decodePayload([]byte(give))
			assert.True(t, apperr.HasReason(err, apperr.RequestInvalid), "code-host delivery: %v", err)

			ev := event.New()
			ev.SetID("1")
			ev.SetSource("/test")
			ev.SetType("test")
			// As binary mode reads it: the body is the data, not base64.
			ev.SetDataContentType("application/json")
			ev.DataEncoded = []byte(give)
			_, _, err = eventData(&ev)
			assert.True(t, apperr.HasReason(err, apperr.RequestInvalid), "event data: %v", err)
		})
	}
	v, err := DecodeJSON([]byte(" {\"x\":1}\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"x": json.Number("1")}, v)
}

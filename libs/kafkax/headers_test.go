package kafkax_test

import (
	"errors"
	"testing"

	"github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/kafkax"
)

func TestHeaderCarrier(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		give     []kafka.Header
		set      map[string]string
		wantGet  map[string]string
		wantKeys []string
	}{
		{
			name:     "empty",
			wantGet:  map[string]string{"traceparent": ""},
			wantKeys: []string{},
		},
		{
			name:     "append",
			give:     []kafka.Header{{Key: "ce_id", Value: []byte("1")}},
			set:      map[string]string{"traceparent": "00-abc"},
			wantGet:  map[string]string{"ce_id": "1", "traceparent": "00-abc"},
			wantKeys: []string{"ce_id", "traceparent"},
		},
		{
			name:     "replace",
			give:     []kafka.Header{{Key: "traceparent", Value: []byte("old")}, {Key: "ce_id", Value: []byte("1")}},
			set:      map[string]string{"traceparent": "new"},
			wantGet:  map[string]string{"traceparent": "new", "ce_id": "1"},
			wantKeys: []string{"traceparent", "ce_id"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := kafkax.HeaderCarrier(tt.give)
			for k, v := range tt.set {
				c.Set(k, v)
			}
			for k, want := range tt.wantGet {
				assert.Equal(t, want, c.Get(k), k)
			}
			assert.Equal(t, tt.wantKeys, c.Keys())
		})
	}
}

func TestPermanent(t *testing.T) {
	t.Parallel()
	cause := errors.New("no such team")
	err := kafkax.Permanent(cause)
	assert.ErrorIs(t, err, kafkax.ErrPermanent)
	assert.ErrorIs(t, err, cause)
	assert.NoError(t, kafkax.Permanent(nil))
}

package kafkax

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBackoff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		n    int
		want time.Duration
	}{
		{"first failure", 1, 100 * time.Millisecond},
		{"second failure", 2, 200 * time.Millisecond},
		{"fourth failure", 4, 800 * time.Millisecond},
		{"capped", 10, time.Second},
		{"far past the cap", 1000, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, backoff(100*time.Millisecond, time.Second, tt.n))
		})
	}
}

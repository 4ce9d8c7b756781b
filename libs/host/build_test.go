package host

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A build that does not return (a store call at startup without a deadline, into a store
// that does not answer) fails the start instead of hanging it; one that returns is
// answered as it is.
func TestBuildWithin(t *testing.T) {
	t.Parallel()
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	refused := errors.New("refused")
	tests := []struct {
		name    string
		build   Builder
		wantErr string
	}{
		{"built", func(context.Context, *Platform) (Unit, error) { return Unit{Name: "u"}, nil }, ""},
		{"refused", func(context.Context, *Platform) (Unit, error) { return Unit{}, refused }, "refused"},
		{"hangs", func(context.Context, *Platform) (Unit, error) { <-stuck; return Unit{}, nil }, "not built within 50ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, err := buildWithin(context.Background(), &Platform{}, tt.build, 50*time.Millisecond)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "u", u.Name)
		})
	}
}

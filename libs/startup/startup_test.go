package startup_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/startup"
)

func TestDo(t *testing.T) {
	t.Parallel()
	refused := errors.New("connection refused")
	opts := startup.Options{Try: 50 * time.Millisecond, Within: 400 * time.Millisecond, Pause: time.Millisecond}
	tests := []struct {
		name string
		// fn's nth call (from 1) answers this.
		fn        func(ctx context.Context, n int32) error
		wantErr   error
		wantTries func(n int32) bool
		wantLog   string
	}{
		{"answers at once", func(context.Context, int32) error { return nil }, nil, func(n int32) bool { return n == 1 }, ""},
		{"store coming up: refused twice, then answers", func(_ context.Context, n int32) error {
			if n < 3 {
				return refused
			}
			return nil
		}, nil, func(n int32) bool { return n == 3 }, "startup step failed; trying again"},
		{"store hangs: each try cut at its deadline, then given up", func(ctx context.Context, _ int32) error {
			<-ctx.Done()
			return ctx.Err()
		}, context.DeadlineExceeded, func(n int32) bool { return n > 1 }, "startup step failed; trying again"},
		{"store refuses for good: given up", func(context.Context, int32) error { return refused }, refused,
			func(n int32) bool { return n > 1 }, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			var n atomic.Int32
			err := startup.DoWith(context.Background(), log, opts, "ensure indexes", func(ctx context.Context) error {
				_, ok := ctx.Deadline()
				require.True(t, ok, "every try has a deadline")
				return tt.fn(ctx, n.Add(1))
			})
			if tt.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), "ensure indexes: gave up after")
			}
			assert.True(t, tt.wantTries(n.Load()), "tries: %d", n.Load())
			assert.Contains(t, logs.String(), tt.wantLog)
		})
	}
}

// A process stopped while its store does not answer stops at once.
func TestDoStopped(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	err := startup.Do(ctx, nil, "seed", func(ctx context.Context) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	})
	require.ErrorIs(t, err, context.Canceled)
}

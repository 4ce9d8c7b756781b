package watch_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/cli/watch"
)

// states is a source that gives its states, then returns err.
type states struct {
	runs []watch.Run
	err  error
}

func (s states) Watch(_ context.Context, _, _ string, each func(watch.Run) error) error {
	for _, r := range s.runs {
		if err := each(r); err != nil {
			return err
		}
	}
	return s.err
}

func TestFollow(t *testing.T) {
	t.Parallel()
	running := watch.Run{ID: "r1", Workflow: "w", Status: "running"}
	ended := watch.Run{ID: "r1", Workflow: "w", Status: "cancelled"}
	broken := errors.New("connection refused")
	tests := []struct {
		name    string
		src     states
		want    watch.Run
		wantErr error
	}{
		{name: "until the run ends", src: states{runs: []watch.Run{running, ended}}, want: ended},
		{name: "a source that stops early", src: states{runs: []watch.Run{running}}, want: running, wantErr: watch.ErrNotEnded},
		{name: "a source that fails", src: states{runs: []watch.Run{running}, err: broken}, want: running, wantErr: broken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, tty := range []bool{false, true} {
				var out bytes.Buffer
				v := &watch.View{Out: &out, TTY: tty, Now: time.Now}
				got, err := watch.Follow(context.Background(), tt.src, "team", "r1", v)
				if tt.wantErr != nil {
					require.ErrorIs(t, err, tt.wantErr)
				} else {
					require.NoError(t, err)
				}
				assert.Equal(t, tt.want, got, "the last state seen")
				assert.Contains(t, out.String(), "r1")
			}
		})
	}
}

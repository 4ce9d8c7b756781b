package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/apperr"
)

func TestStartRetrying(t *testing.T) {
	t.Parallel()
	unavailable := apperr.New(apperr.DependencyUnavailable, "The identity service is unavailable; try again.")
	refused := apperr.New(apperr.WorkflowNotFound, "Workflow 'x' was not found.")
	pauses := []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
	tests := []struct {
		name      string
		answers   []error
		wantCalls int
		wantErr   error
	}{
		{"started at once", []error{nil}, 1, nil},
		{"started once the service is back", []error{unavailable, unavailable, nil}, 3, nil},
		{"refused: not tried again", []error{refused, nil}, 1, refused},
		{"unavailable throughout: the last answer", []error{unavailable, unavailable, unavailable, unavailable, nil}, 4, unavailable},
		{"other errors are not tried again", []error{errors.New("boom"), nil}, 1, errors.New("boom")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			child, err := startRetrying(context.Background(), pauses, func() (string, error) {
				err := tt.answers[calls]
				calls++
				if err != nil {
					return "", err
				}
				return "child-1", nil
			})
			assert.Equal(t, tt.wantCalls, calls)
			if tt.wantErr != nil {
				assert.EqualError(t, err, tt.wantErr.Error())
				assert.Empty(t, child)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, "child-1", child)
		})
	}
}

// A parent's context that ends stops the tries at once.
func TestStartRetryingStopsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err := startRetrying(ctx, []time.Duration{time.Hour}, func() (string, error) {
		calls++
		cancel()
		return "", apperr.New(apperr.DependencyUnavailable, "unavailable")
	})
	assert.Error(t, err)
	assert.Equal(t, 1, calls)
}

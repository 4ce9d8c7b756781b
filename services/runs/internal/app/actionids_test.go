package app

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/memstore"
)

// TestLegacyActionsFindEitherID: an action stored under the id actions were made with
// before ids lost their dot is read and decided under its new id, and one stored under
// the new id under the old one; an id of neither form stays unknown.
func TestLegacyActionsFindEitherID(t *testing.T) {
	t.Parallel()
	const run = "0193a5b2-7c1d-7e4f-8a9b-0c1d2e3f4a5b"
	tests := []struct {
		name, stored, asked string
	}{
		{"stored before, asked by the new id", run + ".2-1", run + "-2-1"},
		{"stored before, asked by its own id", run + ".2-1", run + ".2-1"},
		{"stored now, asked by the old id", run + "-2-1", run + ".2-1"},
		{"stored now, asked by its own id", run + "-2-1", run + "-2-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store := memstore.New()
			require.NoError(t, store.CreateAction(ctx, &domain.Action{ID: tt.stored, Team: "infra", Type: domain.ApprovalAction,
				Status: domain.ActionSubmitted, RunID: run, TaskRunID: run + ".2", Attempt: 1, Required: 1, CreationDate: time.Now()}))
			acts := legacyActions{store}

			a, err := acts.FindAction(ctx, tt.asked)
			require.NoError(t, err)
			assert.Equal(t, tt.stored, a.ID)
			_, err = acts.UpdateAction(ctx, tt.asked, func(a *domain.Action) error {
				a.Reason = "touched"
				return nil
			})
			require.NoError(t, err)
			back, err := store.FindAction(ctx, tt.stored)
			require.NoError(t, err)
			assert.Equal(t, "touched", back.Reason, "the action stored is the one updated")

			_, err = acts.FindAction(ctx, run+"-3-1")
			assert.True(t, apperr.HasReason(err, apperr.ActionNotFound), "%v", err)
			_, err = acts.UpdateAction(ctx, run+".3-1", func(*domain.Action) error { return nil })
			assert.True(t, apperr.HasReason(err, apperr.ActionNotFound), "%v", err)
		})
	}
}

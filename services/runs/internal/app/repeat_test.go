package app_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// A request deciding actions sent again (a gateway sends a PUT to another replica when
// the first died before answering) is answered as the success it was, the action as the
// first left it; another decision by the same person, or one on an action closed, stays
// a conflict.
func TestDecisionSentAgain(t *testing.T) {
	t.Parallel()
	a, _ := newApp(t, limits)
	ctx := context.Background()
	ids := openActions(t, a, 2) // two approvals wanted
	ann, bob, cy := domain.Actioner{ID: "ann", Name: "Ann"}, domain.Actioner{ID: "bob", Name: "Bob"}, domain.Actioner{ID: "cy", Name: "Cy"}
	approve := app.Decision{ID: ids[0], Approved: true, Comments: "ok"}
	action := func(id string) app.ActionView {
		v, err := a.Action(ctx, "infra", id)
		require.NoError(t, err)
		return v
	}

	require.NoError(t, a.Decide(ctx, "infra", ann, []app.Decision{approve}))
	require.NoError(t, a.Decide(ctx, "infra", ann, []app.Decision{approve}), "the same decision again")
	assert.Len(t, action(ids[0]).Actioners, 1, "counted once")

	tests := []struct {
		name string
		by   domain.Actioner
		give []app.Decision
	}{
		{"a rejection by the approver", ann, []app.Decision{{ID: ids[0], Approved: false}}},
		{"other comments", ann, []app.Decision{{ID: ids[0], Approved: true, Comments: "fine"}}},
	}
	for _, tt := range tests {
		err := a.Decide(ctx, "infra", tt.by, tt.give)
		assert.True(t, apperr.HasReason(err, apperr.ActionUnableToAction), "%s: %v", tt.name, err)
	}

	// Repeated in a request with a new decision: the new one is applied.
	require.NoError(t, a.Decide(ctx, "infra", ann, []app.Decision{approve, {ID: ids[1], Approved: true}}))
	assert.Len(t, action(ids[1]).Actioners, 1)

	// Bob's vote approves; sent again, it is answered as applied; Cy's comes too late.
	require.NoError(t, a.Decide(ctx, "infra", bob, []app.Decision{{ID: ids[0], Approved: true}}))
	require.NoError(t, a.Decide(ctx, "infra", bob, []app.Decision{{ID: ids[0], Approved: true}}), "the closing decision again")
	require.NoError(t, a.Decide(ctx, "infra", ann, []app.Decision{approve}), "the first decision again, action closed")
	v := action(ids[0])
	assert.Equal(t, "approved", string(v.Status))
	assert.Len(t, v.Actioners, 2)
	err := a.Decide(ctx, "infra", cy, []app.Decision{{ID: ids[0], Approved: true}})
	assert.True(t, apperr.HasReason(err, apperr.ActionUnableToAction), "another person on a closed action: %v", err)
}

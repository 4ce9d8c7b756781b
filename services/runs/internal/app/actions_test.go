package app_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// openActions submits n runs waiting on a two-vote approval and answers their actions' ids.
func openActions(t *testing.T, a *app.App, n int) []string {
	t.Helper()
	var ids []string
	for range n {
		v, _, err := submit(t, a, "approve", "", true)
		require.NoError(t, err)
		var id string
		require.Eventually(t, func() bool {
			list, _, err := a.FindActions(context.Background(), domain.ActionFilter{Team: "infra"}, domain.ActionSort{Field: "creationDate"}, pageAll)
			require.NoError(t, err)
			for _, act := range list {
				if act.WorkflowRunRef == v.ID {
					id = act.ID
				}
			}
			return id != ""
		}, 5*time.Second, time.Millisecond)
		ids = append(ids, id)
	}
	return ids
}

func TestDecideAllOrNone(t *testing.T) {
	t.Parallel()
	a, _ := newApp(t, limits)
	ctx := context.Background()
	ids := openActions(t, a, 3)
	ann, bob := domain.Actioner{ID: "ann", Name: "Ann"}, domain.Actioner{ID: "bob", Name: "Bob"}
	approve := func(ids ...string) []app.Decision {
		var out []app.Decision
		for _, id := range ids {
			out = append(out, app.Decision{ID: id, Approved: true})
		}
		return out
	}
	votes := func(id string) int {
		v, err := a.Action(ctx, "infra", id)
		require.NoError(t, err)
		return len(v.Actioners)
	}

	// One unknown item: nothing applied, nothing left held.
	err := a.Decide(ctx, "infra", ann, append(approve(ids[0], ids[1]), app.Decision{ID: ids[2] + "x", Approved: true}))
	assert.True(t, apperr.HasReason(err, apperr.ActionNotFound), "%v", err)
	// A voted already, otherwise (checked while holding): nothing applied, and the holds
	// let go.
	require.NoError(t, a.Decide(ctx, "infra", bob, approve(ids[2])))
	err = a.Decide(ctx, "infra", bob, append(approve(ids[0]), app.Decision{ID: ids[2], Approved: false}))
	assert.True(t, apperr.HasReason(err, apperr.ActionUnableToAction), "%v", err)
	assert.Equal(t, 0, votes(ids[0]))
	require.NoError(t, a.Decide(ctx, "infra", ann, approve(ids[0])), "no hold left behind")

	// Two people's batches over the same actions at once, ids[2] one vote short: whichever
	// comes second finds ids[2] closed and applies nothing, ids[1] included.
	cy, dan := domain.Actioner{ID: "cy"}, domain.Actioner{ID: "dan"}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = a.Decide(ctx, "infra", cy, approve(ids[1], ids[2])) })
	wg.Go(func() { errs[1] = a.Decide(ctx, "infra", dan, approve(ids[2], ids[1])) })
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
			assert.True(t, apperr.HasReason(err, apperr.ActionUnableToAction), "%v", err)
		}
	}
	assert.Equal(t, 1, failed, "one batch wins")
	assert.Equal(t, 1, votes(ids[1]), "the losing batch left nothing behind")
	assert.Equal(t, 2, votes(ids[2]))
}

var pageAll = page.Request{Size: 100}

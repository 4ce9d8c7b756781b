package sqlitestore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/runs/internal/sqlitestore"
)

// The reconciler's look at a replica's child runs, every few seconds, reads the index of
// child runs, not every run of the replica's (by owner) to keep the few with a depth.
func TestChildRunsOfAReplicaAreReadByTheirIndex(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	q := sqlitestore.HotQueries()["the child runs of a replica"]
	plan, err := s.Plan(context.Background(), q.Query, q.Args...)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(strings.Join(plan, "\n"), "SEARCH runs USING INDEX runs_owner_children (owner=?)"), "%v", plan)
}

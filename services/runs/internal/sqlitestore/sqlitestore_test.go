package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/sqlitestore"
	"github.com/baton-flow/baton/services/runs/internal/storetest"
)

// newStore opens a store on a file of its own, sealing with a fresh key.
func newStore(t *testing.T) *sqlitestore.Store {
	t.Helper()
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	box, err := secrets.FromString(key)
	require.NoError(t, err)
	s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "runs.db"), box)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func TestStoreContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) app.Stores {
		s := newStore(t)
		return app.Stores{Runs: s, Quotas: s, Keys: s, Heartbeats: s, Logs: s, Replicas: s, Actions: s, Locks: s, Queues: s}
	})
}

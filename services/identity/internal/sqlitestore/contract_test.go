package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/identity/internal/sqlitestore"
	"github.com/baton-flow/baton/services/identity/internal/storetest"
)

func newStore(t testing.TB) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "identity.db"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func TestStoreContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Stores {
		s := newStore(t)
		return storetest.Stores{
			Teams: s, TokenTeams: s, Users: s, Tokens: s, Params: s, System: s,
			NewRelay: func(p storetest.Publisher) storetest.Relay { return sqlitestore.NewRelay(s, p, 0, nil) },
		}
	})
}

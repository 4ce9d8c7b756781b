package sqlitestore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/schedules/internal/sqlitestore"
	"github.com/baton-flow/baton/services/schedules/internal/storetest"
)

// newStore opens a store on a file of its own, sealing with a fresh key.
func newStore(t *testing.T) *sqlitestore.Store {
	t.Helper()
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	box, err := secrets.FromString(key)
	require.NoError(t, err)
	s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "schedules.db"), box)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func TestStoreContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) storetest.Store { return newStore(t) },
		// The database file and its write-ahead log, where every write lands first.
		AtRest: func(t *testing.T, s storetest.Store) []byte {
			files, err := filepath.Glob(filepath.Join(filepath.Dir(s.(*sqlitestore.Store).Path()), "*"))
			require.NoError(t, err)
			var all []byte
			for _, f := range files {
				raw, err := os.ReadFile(f)
				require.NoError(t, err)
				all = append(all, raw...)
			}
			return all
		},
	})
}

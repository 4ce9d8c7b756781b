package sqlitestore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/workflows/internal/sqlitestore"
	"github.com/baton-flow/baton/services/workflows/internal/storetest"
)

const testKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

// newStore opens a store on a fresh file; the second store returned shares its database,
// with a memory of its own.
func newStore(t *testing.T) (*sqlitestore.Store, *sqlitestore.Store, string) {
	t.Helper()
	box, err := secrets.FromString(testKey)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "workflows.db")
	db, err := sqlitex.Open(context.Background(), path, sqlitex.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	s, err := sqlitestore.New(context.Background(), db, box)
	require.NoError(t, err)
	other, err := sqlitestore.New(context.Background(), db, box)
	require.NoError(t, err)
	return s, other, path
}

func TestStoreContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Stores {
		s, other, path := newStore(t)
		return storetest.Stores{
			Definitions: s, Teams: s, Counter: s, Other: other, Run: s.RunCollector,
			// The file and its write-ahead log, as they are on disk.
			AtRest: func(t *testing.T) string {
				var out []byte
				for _, f := range []string{path, path + "-wal"} {
					b, err := os.ReadFile(f)
					if !os.IsNotExist(err) {
						require.NoError(t, err)
					}
					out = append(out, b...)
				}
				return string(out)
			},
		}
	})
}

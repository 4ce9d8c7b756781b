package sqlitestore_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/integrations/internal/sqlitestore"
	"github.com/baton-flow/baton/services/integrations/internal/storetest"
)

// newBox is a box sealing with a fresh key.
func newBox(t *testing.T) *secrets.Box {
	t.Helper()
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	box, err := secrets.FromString(key)
	require.NoError(t, err)
	return box
}

// open opens the store on the file at path, closed when the test ends.
func open(t *testing.T, path string, box secrets.Sealer) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), path, box)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// newStore opens a store on a file of its own.
func newStore(t *testing.T) *sqlitestore.Store {
	t.Helper()
	return open(t, filepath.Join(t.TempDir(), "integrations.db"), newBox(t))
}

func ports(s *sqlitestore.Store) storetest.Stores {
	return storetest.Stores{Chat: s.Chat(), CodeHost: s.CodeHost(), Receipts: s.Receipts(), Deliveries: s.Deliveries()}
}

func TestStoreContract(t *testing.T) {
	t.Parallel()
	// files maps each test's chat store to its file and its box.
	var files sync.Map
	type file struct {
		store *sqlitestore.Store
		box   secrets.Sealer
	}
	recall := func(s storetest.Stores) file {
		v, _ := files.Load(s.Chat)
		return v.(file)
	}
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) storetest.Stores {
			box := newBox(t)
			s := open(t, filepath.Join(t.TempDir(), "integrations.db"), box)
			p := ports(s)
			files.Store(p.Chat, file{s, box})
			return p
		},
		// The process before stopped at once: its file is closed with nothing more
		// written, and opened again.
		Reopen: func(t *testing.T, p storetest.Stores) storetest.Stores {
			was := recall(p)
			require.NoError(t, was.store.Close())
			return ports(open(t, was.store.Path(), was.box))
		},
		// The database file and its write-ahead log, where every write lands first.
		AtRest: func(t *testing.T, p storetest.Stores) []byte {
			files, err := filepath.Glob(filepath.Join(filepath.Dir(recall(p).store.Path()), "*"))
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

package mongostore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/tasks/internal/app"
	"github.com/baton-flow/baton/services/tasks/internal/mongostore"
	"github.com/baton-flow/baton/services/tasks/internal/storetest"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// The Mongo store keeps the contract on the embedded MongoDB-wire server (or the MongoDB
// the test environment names).
func TestStoreContract(t *testing.T) {
	t.Parallel()
	box, err := secrets.FromString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	require.NoError(t, err)
	storetest.Run(t, func(t *testing.T) app.TaskStore {
		ctx := context.Background()
		client, err := mongox.Connect(ctx, testkit.MongoURI(t))
		require.NoError(t, err)
		t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
		s, err := mongostore.NewTasks(ctx, client.Database(testkit.Database(t)), box)
		require.NoError(t, err)
		return s
	})
}

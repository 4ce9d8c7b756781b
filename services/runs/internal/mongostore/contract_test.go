package mongostore_test

import (
	"testing"

	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/storetest"
)

func TestStoreContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) app.Stores {
		s, _ := newStoreDB(t)
		return app.Stores{Runs: s, Quotas: s, Keys: s, Heartbeats: s, Logs: s, Replicas: s, Actions: s, Locks: s, Queues: s}
	})
}

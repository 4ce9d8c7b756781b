package mongostore_test

import (
	"testing"

	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/mongostore"
	"github.com/baton-flow/baton/services/runs/internal/storetest"
)

func TestStoreContract(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts []mongostore.Option
	}{
		{"shared", nil},
		// The standalone process's store checks its writes' conditions itself.
		{"exclusive", []mongostore.Option{mongostore.Exclusive()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) app.Stores {
				s, _ := newStoreDB(t, tt.opts...)
				return app.Stores{Runs: s, Quotas: s, Keys: s, Heartbeats: s, Logs: s, Replicas: s, Actions: s, Locks: s, Queues: s}
			})
		})
	}
}

package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/gateway/internal/cli"
	"github.com/baton-flow/baton/gateway/internal/standalone"
)

// `baton server` says where each service keeps its data, and what it connects to: the
// store only when a service uses one.
func TestServerTellsWhereTheDataIs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give standalone.Step
		want string
	}{
		{"files of their own", standalone.Step{Kind: standalone.StepOwnDatabases, Detail: "/d", Services: []string{"runs", "identity", "tasks"}},
			"Data of runs, identity and tasks in SQLite files of their own (<service>.db)"},
		{"one file", standalone.Step{Kind: standalone.StepOwnDatabases, Detail: "/d", Services: []string{"tasks"}},
			"Data of tasks in SQLite files of their own (<service>.db)"},
		{"the store of an earlier version", standalone.Step{Kind: standalone.StepStoreStarting, Detail: "/d/mongo", Services: []string{"runs", "identity"}},
			"Starting the embedded store (MongoDB protocol, on SQLite) in /d/mongo for runs and identity, whose data an earlier version kept there"},
		{"no service on a store", standalone.Step{Kind: standalone.StepConnecting}, "Connecting to the broker"},
		{"services on a store", standalone.Step{Kind: standalone.StepConnecting, Services: []string{"runs"}}, "Connecting to the store and the broker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			cli.Tell(&out, func() time.Time { return at })(tt.give)
			assert.Equal(t, "[  0.0s] "+tt.want+"\n", out.String())
		})
	}
}

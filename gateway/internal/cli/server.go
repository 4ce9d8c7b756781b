package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-flow/baton/gateway/internal/standalone"
)

// newServerCmd is `baton server`: the standalone mode, every service in this process on
// SQLite files of their own and an embedded broker, telling each step of its start as it
// happens.
func newServerCmd(env *Env) *cobra.Command {
	var addr, adminAddr, dataDir, token string
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run Baton on this machine: the API and every service in one process",
		Long: `Runs the gateway and every Baton service in this process, each service keeping its
data in a SQLite file of its own in the data directory, on an in-process Kafka-protocol
broker, unless BATON_MONGO_URI or BATON_KAFKA_BROKERS name real ones. A data directory made
by an earlier version, whose embedded MongoDB-compatible store holds services' data, starts
that store for them. It prints each step of its
start, then where the API, its documentation and the operators' listener are, and the admin
token, kept in the data directory so that it stays the same across restarts.

Flags override the BATON_* environment the server also reads: BATON_GATEWAY_ADDR,
BATON_ADMIN_ADDR, BATON_DATA_DIR, BATON_BOOTSTRAP_TOKEN. Stop it with Ctrl-C: it drains
in-flight requests and stops cleanly.`,
		Example: `  baton server
  baton server --addr 0.0.0.0:8080 --data-dir /var/lib/baton
  BATON_MONGO_URI=mongodb://db:27017 baton server`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flags := map[string]string{}
			set := func(flag, key, v string) {
				if cmd.Flags().Changed(flag) {
					flags[key] = v
				}
			}
			set("addr", "BATON_GATEWAY_ADDR", addr)
			set("admin-addr", "BATON_ADMIN_ADDR", adminAddr)
			set("data-dir", "BATON_DATA_DIR", dataDir)
			set("token", "BATON_BOOTSTRAP_TOKEN", token)
			getenv := func(k string) string {
				if v, ok := flags[k]; ok {
					return v
				}
				return env.Getenv(k)
			}
			out := cmd.OutOrStdout()
			return standalone.RunWithProgress(cmd.Context(), getenv, out, tell(out, time.Now))
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", standalone.DefaultGatewayAddr, "where the API listens (BATON_GATEWAY_ADDR)")
	f.StringVar(&adminAddr, "admin-addr", standalone.DefaultAdminAddr, "where the operators' listener (/metrics) listens (BATON_ADMIN_ADDR)")
	f.StringVar(&dataDir, "data-dir", standalone.DefaultDataDir, "where the store, keys and admin token are kept (BATON_DATA_DIR)")
	f.StringVar(&token, "token", "", "the admin token to use instead of the one kept in the data directory (BATON_BOOTSTRAP_TOKEN)")
	return cmd
}

// tell writes each step of a start as one line, with the time since the start.
func tell(out io.Writer, now func() time.Time) standalone.Progress {
	start := now()
	var mu sync.Mutex
	return func(s standalone.Step) {
		mu.Lock()
		defer mu.Unlock()
		var line, more string
		switch s.Kind {
		case standalone.StepDataDir:
			abs, err := filepath.Abs(s.Detail)
			if err != nil {
				abs = s.Detail
			}
			line = "Data directory " + abs
		case standalone.StepOwnDatabases:
			line = "Data of " + sentenceList(s.Services) + " in SQLite files of their own (<service>.db)"
		case standalone.StepStoreStarting:
			line = "Starting the embedded store (MongoDB protocol, on SQLite) in " + s.Detail + " for " + sentenceList(s.Services) +
				", whose data an earlier version kept there"
		case standalone.StepStoreReady:
			line = "Store ready"
		case standalone.StepBrokerStarting:
			line = "Starting the embedded broker (Kafka protocol, in memory)"
		case standalone.StepBrokerReady:
			line = "Broker ready at " + s.Detail
		case standalone.StepConnecting:
			line = "Connecting to the broker"
			if len(s.Services) > 0 {
				line = "Connecting to the store and the broker"
			}
		case standalone.StepServiceBuilt:
			line = "Service " + s.Detail + " set up"
		case standalone.StepServiceReady:
			line = "Service " + s.Detail + " ready on " + s.Addr
			if s.Detail == "gateway" {
				more = fmt.Sprintf("API documentation at http://%s/api/v2/docs", s.Addr)
			}
		default:
			return
		}
		at := now().Sub(start).Seconds()
		fmt.Fprintf(out, "[%5.1fs] %s\n", at, line)
		if more != "" {
			fmt.Fprintf(out, "[%5.1fs] %s\n", at, more)
		}
	}
}

// sentenceList joins names as a sentence does: "a", "a and b", "a, b and c".
func sentenceList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

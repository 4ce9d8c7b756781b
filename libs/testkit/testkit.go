// Package testkit gives tests real infrastructure — a MongoDB-compatible server, a Kafka
// broker and a Consul agent — started lazily once per test binary and shared by its tests.
//
// The environment variable BATON_TEST_INFRA picks where it comes from:
//
//   - "" or "embedded" (default): FerretDB on SQLite in a temp dir and franz-go's kfake,
//     both in-process, plus a real Consul agent in dev mode run from the binary named by
//     BATON_CONSUL_BIN, else <repo root>/.tools/bin/consul (built by `make tools`);
//   - "containers": Docker containers through testcontainers-go (mongo:7,
//     confluentinc/confluent-local, hashicorp/consul:1.20).
//
// Use it from TestMain so everything started is stopped when the tests end:
//
//	func TestMain(m *testing.M) { testkit.Main(m) }
//
// Tests share the servers, so each should work in its own namespace: a database from
// Database, topics and consumer groups prefixed with TopicPrefix, and Consul service
// names of its own.
package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Environment variables read by testkit.
const (
	// EnvInfra selects the infrastructure: "embedded" (default) or "containers".
	EnvInfra = "BATON_TEST_INFRA"
	// EnvConsulBin overrides the path of the consul binary used in embedded mode.
	EnvConsulBin = "BATON_CONSUL_BIN"
)

const (
	modeEmbedded   = "embedded"
	modeContainers = "containers"
)

// startTimeout bounds starting one piece of infrastructure; containers may need to pull
// their image first.
const startTimeout = 3 * time.Minute

// Main runs the tests, then each of after (reports of what the tests did), stops all
// infrastructure they started, and exits with their status, or 1 when one of after
// failed. Call it from TestMain.
func Main(m *testing.M, after ...func() error) {
	code := m.Run()
	for _, f := range after {
		if err := f(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = max(code, 1)
		}
	}
	stopAll()
	os.Exit(code)
}

// MongoURI returns the mongodb:// URI of the shared server, starting it on first use.
func MongoURI(t testing.TB) string {
	t.Helper()
	uri, err := mongoServer.get(func(ctx context.Context) (string, func(), error) {
		if containers() {
			return startMongoContainer(ctx)
		}
		return startMongoEmbedded(ctx)
	})
	if err != nil {
		t.Fatalf("testkit: start mongo (%s mode): %v", mode(), err)
	}
	return uri
}

// KafkaBrokers returns the bootstrap addresses of the shared broker, starting it on first
// use. Topics are auto-created on first use.
func KafkaBrokers(t testing.TB) []string {
	t.Helper()
	brokers, err := kafkaBroker.get(func(ctx context.Context) ([]string, func(), error) {
		if containers() {
			return startKafkaContainer(ctx)
		}
		return startKafkaEmbedded()
	})
	if err != nil {
		t.Fatalf("testkit: start kafka (%s mode): %v", mode(), err)
	}
	return slices.Clone(brokers)
}

// ConsulAddr returns the "host:port" of the shared Consul agent's HTTP API, starting it
// on first use; its leader is elected by then.
func ConsulAddr(t testing.TB) string {
	t.Helper()
	addr, err := consulAgent.get(func(ctx context.Context) (string, func(), error) {
		if containers() {
			return startConsulContainer(ctx)
		}
		return startConsulAgent(ctx)
	})
	if err != nil {
		t.Fatalf("testkit: start consul (%s mode): %v", mode(), err)
	}
	return addr
}

// Database returns a database name no other test in this binary gets, short and made of
// characters both MongoDB and FerretDB accept (FerretDB allows ^[a-zA-Z0-9_-]{1,63}$).
// The database is not dropped afterwards, so a failing test's data can be inspected.
func Database(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("t%s_%d", runID, seq.Add(1))
}

// TopicPrefix returns a prefix such as "t1a2b-12." no other test in this binary gets.
// Prefix topic names and consumer-group IDs with it so tests sharing the broker do not
// see each other's messages. (No "_": Kafka treats "." and "_" in topic names as one.)
func TopicPrefix(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("t%s-%d.", runID, seq.Add(1))
}

var (
	mongoServer lazy[string]
	kafkaBroker lazy[[]string]
	consulAgent lazy[string]

	// runID tells this test process's names from another's, should two ever share a
	// server; seq makes names unique within the process.
	runID = newRunID()
	seq   atomic.Int64

	stopMu sync.Mutex
	stops  []func()
)

func newRunID() string {
	b := make([]byte, 2)
	_, _ = rand.Read(b) // never fails on supported platforms
	return hex.EncodeToString(b)
}

func mode() string {
	if m := os.Getenv(EnvInfra); m != "" {
		return m
	}
	return modeEmbedded
}

func containers() bool { return mode() == modeContainers }

// lazy starts a value once and remembers it, or the error that prevented it.
type lazy[T any] struct {
	once sync.Once
	val  T
	err  error
}

func (l *lazy[T]) get(start func(ctx context.Context) (T, func(), error)) (T, error) {
	l.once.Do(func() {
		if m := mode(); m != modeEmbedded && m != modeContainers {
			l.err = fmt.Errorf("%s=%q: want %q or %q", EnvInfra, m, modeEmbedded, modeContainers)
			return
		}
		// Not the test's context: the infrastructure outlives the test that started it.
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		var stop func()
		l.val, stop, l.err = start(ctx)
		if stop != nil {
			stopMu.Lock()
			stops = append(stops, stop)
			stopMu.Unlock()
		}
	})
	return l.val, l.err
}

// stopAll stops everything started, newest first.
func stopAll() {
	stopMu.Lock()
	defer stopMu.Unlock()
	for _, stop := range slices.Backward(stops) {
		stop()
	}
	stops = nil
}

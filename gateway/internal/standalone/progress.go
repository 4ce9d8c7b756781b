package standalone

// Progress is told each step of a start as it happens, so that a command starting Baton can
// say what it is doing instead of staying silent while the store and services come up.
// It is called from the starting goroutine and, for services becoming ready, from the one
// serving them; it must not block for long.
type Progress func(Step)

// Step is one step of a start.
type Step struct {
	Kind StepKind
	// Detail names what the step is about: the data directory, the store's directory or
	// URI, the broker's addresses, or the service's name.
	Detail string
	// Addr is where a ready service listens.
	Addr string
	// Services are the services a step concerns: those given a SQLite file of their own
	// (StepOwnDatabases), those whose data the embedded MongoDB holds (StepStoreStarting),
	// those that connect to a MongoDB (StepConnecting: none when the process connects to
	// the broker alone).
	Services []string
}

// StepKind says which step a Step is.
type StepKind int

// The steps of a start, in the order they happen. The embedded store's and broker's are
// skipped when BATON_MONGO_URI or BATON_KAFKA_BROKERS names real ones; the embedded
// store's also when no service's data is in it, as in every data directory this version
// made.
const (
	// StepDataDir: the data directory exists (Detail is its path).
	StepDataDir StepKind = iota + 1
	// StepOwnDatabases: Services keep their data in SQLite files of their own,
	// <service>.db in the data directory (Detail: its path).
	StepOwnDatabases
	// StepStoreStarting: the embedded MongoDB-compatible store is starting for Services,
	// whose data an earlier version kept there (Detail: its directory).
	StepStoreStarting
	// StepStoreReady: the embedded store answers (Detail: its URI).
	StepStoreReady
	// StepBrokerStarting: the embedded Kafka-protocol broker is starting.
	StepBrokerStarting
	// StepBrokerReady: the embedded broker listens (Detail: its addresses).
	StepBrokerReady
	// StepConnecting: connecting to the broker and discovery, and to the store when
	// Services use one.
	StepConnecting
	// StepServiceBuilt: a service is set up (Detail: its name), not yet serving.
	StepServiceBuilt
	// StepServiceReady: a service serves (Detail: its name; Addr: where). The gateway's is
	// the last.
	StepServiceReady
)

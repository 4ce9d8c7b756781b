package domain

import (
	"errors"
	"time"
)

// What the stores keep beside runs and task runs, and how runs are selected: the types the
// store ports speak, so that no layer above a store knows how it stores them.

// ErrConflict is what a conditional write answers when the document changed since it was
// read: another writer moved first, and the caller must read again and decide anew.
var ErrConflict = errors.New("changed since it was read")

// InFlight is a run that has not been put away yet: queued, running, or ended and not yet
// moved to the archive.
type InFlight struct {
	ID      string
	Team    string
	Owner   string
	Created time.Time
	// Queued marks a run waiting for a concurrency slot.
	Queued bool
	Phase  Phase
	// Ancestors are the runs above a child run in its tree, root first.
	Ancestors []string
	// WakeAt is when the run next has a timed move, as last stored (Run.WakeAt).
	WakeAt time.Time
}

// InFlightFilter selects runs in flight; its zero value selects them all. The engine asks
// for the few it needs (a dead replica's, the queued, the children), and for all of them
// only now and then: the runs waiting on people may be many.
type InFlightFilter struct {
	// Owners keeps the runs held by one of these replicas.
	Owners []string
	// Team keeps one team's runs.
	Team string
	// Queued keeps the runs waiting for a concurrency slot.
	Queued bool
	// Children keeps child runs (with ancestors).
	Children bool
	// WakeBefore keeps the runs whose stored WakeAt is set and before it.
	WakeBefore time.Time
}

// RunFilter selects runs of a team.
type RunFilter struct {
	Team      string
	Labels    map[string]string
	Statuses  []string
	Phases    []string
	IDs       []string
	Workflows []string
	Triggers  []string
	From, To  *time.Time
	// None selects nothing.
	None bool
	// Exclude lists runs not to select.
	Exclude []string
}

// QuotaUsage is what a team uses of its run quotas: the runs holding a concurrency slot,
// and the runs counted against a month.
type QuotaUsage struct {
	Concurrent int
	Monthly    int
}

// HeldCount is a run counted against its team's month whose creation is not known to have
// stored it: its submit is in flight, or failed or died before giving the count back.
type HeldCount struct {
	Team, Month, Run string
	// Since is when the run was counted.
	Since time.Time
}

// Heartbeat is the last sign of life a runner gave for an attempt of a task run.
type Heartbeat struct {
	Attempt int
	Runner  string
	At      time.Time
}

// LogCursor is where a read of a task run's log stopped: the next chunk to read.
type LogCursor struct {
	Attempt, Seq int
}

// Insight aggregates the runs a filter selects.
type Insight struct {
	// Total is how many runs match; Running how many of them are in phase running.
	Total, Running int64
	// TotalDuration and MedianDuration are in milliseconds; a run in flight counts what it
	// has taken so far, one not started 0.
	TotalDuration, MedianDuration int64
	// Runs are the newest matches, newest first.
	Runs []RunSummary
}

// RunSummary is one run of an Insight.
type RunSummary struct {
	ID, Workflow string
	Status       Status
	CreationDate time.Time
	Duration     int64
}

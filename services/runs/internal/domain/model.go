// Package domain is the engine's core: runs, task runs, the DAG rules that move them
// (API.md §4) and the task types that execute inside the engine (API.md §5). It knows
// nothing of HTTP, Mongo or Kafka: the app layer loads a State, lets a Machine change it,
// stores what changed and carries out the Effects.
package domain

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/secrets"
)

// Status is a run's or a task run's status.
type Status string

// Statuses (API.md §4).
const (
	NotStarted Status = "notstarted"
	Ready      Status = "ready"
	Running    Status = "running"
	Waiting    Status = "waiting"
	Succeeded  Status = "succeeded"
	Failed     Status = "failed"
	Invalid    Status = "invalid"
	Skipped    Status = "skipped"
	Cancelled  Status = "cancelled"
	TimedOut   Status = "timedout"
)

// Statuses lists every status, in the contract's order.
var Statuses = []Status{NotStarted, Ready, Running, Waiting, Succeeded, Failed, Invalid, Skipped, Cancelled, TimedOut}

// Terminal reports whether s is final.
func (s Status) Terminal() bool {
	switch s {
	case Succeeded, Failed, Invalid, Skipped, Cancelled, TimedOut:
		return true
	}
	return false
}

// Valid reports whether s is a known status.
func (s Status) Valid() bool { return slices.Contains(Statuses, s) }

// Phase is where a run is in its life.
type Phase string

// Phases (API.md §4).
const (
	Pending      Phase = "pending"
	Queued       Phase = "queued"
	PhaseRunning Phase = "running"
	Completed    Phase = "completed"
	Finalized    Phase = "finalized"
)

// Phases lists every phase.
var Phases = []Phase{Pending, Queued, PhaseRunning, Completed, Finalized}

// Ended reports whether a run in phase p has ended.
func (p Phase) Ended() bool { return p == Completed || p == Finalized }

// Triggers say how a run was started.
var Triggers = []string{"manual", "schedule", "webhook", "event", "codehost", "chat", "task", "retry"}

// Initiator says who started a run.
type Initiator struct {
	Type string `json:"type,omitempty"`
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	// Person is the user answerable for the start, whatever credential it came with (a
	// token's maker): the one the setting actions.preventSelfApproval keeps from approving
	// the run. Empty when no user is (the bootstrap token). Not shown.
	Person string `json:"person,omitempty"`
}

// Run is a workflow run. Definition is the workflow version it runs, kept with it so a
// replaced version never changes history.
type Run struct {
	ID                  string
	Team                string
	Workflow            string
	WorkflowDisplayName string
	WorkflowVersion     int
	Status              Status
	Phase               Phase
	StatusMessage       string
	Trigger             string
	InitiatedBy         Initiator
	Labels              map[string]string
	Annotations         map[string]any
	Params              map[string]any
	Results             map[string]any
	// Workspaces is left out of a copy through JSON when there are none, so that none reads
	// back as none rather than as the JSON null.
	Workspaces   json.RawMessage `json:",omitempty"`
	CreationDate time.Time
	StartTime    time.Time
	EndTime      time.Time
	// Timeout is in minutes; Deadline is StartTime + Timeout once started.
	Timeout  int
	Deadline time.Time
	Retries  int
	Debug    bool
	RetryOf  string
	// ParentRun and ParentTask name the runworkflow task run that started this run.
	ParentRun  string
	ParentTask string
	// Ancestors are the runs above this one in its tree of child runs, the root first and
	// ParentRun last: stopping any of them stops this run. Depth is how deeply this run
	// is nested (len(Ancestors), but for a retry, which keeps the depth of the run it
	// retries and starts a tree of its own); a child deeper than the limit (runs.maxDepth)
	// is never started.
	Ancestors []string
	Depth     int
	// SharesSlot marks a child run its parent waits for: it runs within the concurrency
	// slot its tree holds and takes none of its own, so a parent waiting on its children
	// can never leave them queued behind the slot it holds itself.
	SharesSlot bool
	// FinalStatus is set by a setwfstatus task; it overrides the computed final status.
	FinalStatus Status
	// WakeAt is when the run next has a timed move (a gate's timeout, a retry, its
	// deadline), as of its last step: a replica holding the run out of memory loads it
	// again by it, in time. A hint only, possibly stale: a run loaded early finds nothing due.
	WakeAt time.Time
	// AwaitingApproval is set while an approval task of the run waits for its decision.
	AwaitingApproval bool
	// Callbacks are the wait-for-event callbacks that came before a task waited for
	// them, by topic: an eventwait task that starts later takes its topic's at once.
	Callbacks map[string]Callback
	// Context holds the values of the layers outside the run: global and team params and
	// the secrets to mask, captured at submit.
	Context RunContext
	// SecretParams names the run params of password type, and those a parent run passed
	// from a secret: masked in answers, sealed at rest.
	SecretParams []string
	// SecretResults names the run results set from a secret.
	SecretResults []string
	// TaskDefaultTimeout is the default task timeout in minutes.
	TaskDefaultTimeout int
	Definition         *Definition
	// DefinitionID names where Definition is stored: runs of the same workflow version
	// share it. Empty for runs stored before definitions were shared (then the run's id).
	DefinitionID string
	// Tasks is the number of task runs; their ids are TaskRunID(ID, i).
	Tasks   int
	Version int64
	// Owner names the replica holding the run while it is in flight, empty once it has
	// ended and been put away; Queued marks it waiting for a concurrency slot.
	Owner  string
	Queued bool
	// EventSeq numbers the run's status events: the last one made, as of this write (its
	// task runs' EventSeq may be later, see OwedEvent). Owed are the run's own status
	// events not yet known to be recorded downstream.
	EventSeq int64
	Owed     []OwedEvent
}

// OwedEvent is a status event a stored change owes, written in the same write as the
// change (the run's, or its task run's) and kept until the events' consumer says it
// recorded it: a crash, or a broker that loses it, loses nothing the store does not still
// hold, and it is sent again, with its id and number, until then. Seq orders a run's
// events across the run and its task runs; Body is the CloudEvent as sent (structured
// JSON, secrets masked).
type OwedEvent struct {
	Seq  int64
	Body []byte
}

// OwedRun is what a run put away still owes: its status events not yet known to be
// recorded downstream, kept apart from it, and when they were last sent.
type OwedRun struct {
	Run  string
	Owed []OwedEvent
	At   time.Time
}

// Unrecorded answers the events of owed that recorded does not hold, in the order of owed.
func Unrecorded(owed []OwedEvent, recorded map[int64]bool) []OwedEvent {
	if len(recorded) == 0 {
		return owed
	}
	var out []OwedEvent
	for _, o := range owed {
		if !recorded[o.Seq] {
			out = append(out, o)
		}
	}
	return out
}

// RunContext is what a run's references resolve against beyond its own params.
type RunContext struct {
	Global map[string]any `json:"global,omitempty"`
	Team   map[string]any `json:"team,omitempty"`
	// Secrets are the values masked in logs and answers.
	Secrets []string `json:"secrets,omitempty"`
	// SecretNames names the password parameters of Global and Team, as "global.<name>"
	// and "team.<name>": their values are secret wherever they are substituted.
	SecretNames []string `json:"secretNames,omitempty"`
	// Links are the context params that are URLs of this run.
	Links map[string]string `json:"links,omitempty"`
	// CallbackToken is the run's callback-token context param: a credential that answers
	// the run's callbacks only. It is among Secrets too, so it is masked wherever it shows.
	CallbackToken string `json:"callbackToken,omitempty"`
}

// DefaultMaxDepth is how deep child runs may nest when the runs.maxDepth setting is not
// known.
const DefaultMaxDepth = 10

// DefaultMaxTreeRuns is how many runs one run may start below it, at every depth together,
// when the runs.maxTreeRuns setting is not known: with several runworkflow tasks a tree
// within the depth limit could still hold k^depth runs.
const DefaultMaxTreeRuns = 1000

// Root is the id of the run at the top of r's tree.
func (r *Run) Root() string {
	if len(r.Ancestors) == 0 {
		return r.ID
	}
	return r.Ancestors[0]
}

// Lineage is what the Ancestors of r's children are.
func (r *Run) Lineage() []string {
	return append(slices.Clip(r.Ancestors), r.ID)
}

// Stopped reports whether r ended cancelled or timed out: its descendants still in flight
// are cancelled then, whether their runworkflow task waited for them or not.
func (r *Run) Stopped() bool {
	return r.Phase.Ended() && (r.Status == Cancelled || r.Status == TimedOut)
}

// Duration is how long the run has taken, in milliseconds.
func (r *Run) Duration(now time.Time) int64 {
	if r.StartTime.IsZero() {
		return 0
	}
	end := r.EndTime
	if end.IsZero() {
		end = now
	}
	return end.Sub(r.StartTime).Milliseconds()
}

// TaskRun is the run of one task of a run's definition.
type TaskRun struct {
	ID    string
	RunID string
	// Index is the task's position in the definition.
	Index         int
	Name          string
	Type          string
	Status        Status
	StatusMessage string
	TaskRef       string
	TaskVersion   int
	Params        map[string]any
	Results       map[string]string
	CreationDate  time.Time
	StartTime     time.Time
	EndTime       time.Time
	// Timeout is in minutes.
	Timeout int
	// Attempt counts from 1 once the task starts.
	Attempt int
	// Deadline is when the current attempt times out.
	Deadline time.Time
	// WakeAt is when a waiting task moves on: a sleep ends or a retry is due.
	WakeAt time.Time
	// DispatchedAt is when the current attempt was last sent out; kept in memory only.
	DispatchedAt time.Time
	// Runner names the runner executing the attempt; Heartbeat is when it last reported.
	Runner    string
	Heartbeat time.Time
	// Decision is a decision task's value.
	Decision string
	// Child is the run a runworkflow task started.
	Child string
	// Kept marks a task that succeeded in the run this one retries: it keeps its results
	// and does not run again.
	Kept bool
	// SecretParams and SecretResults name the params and results that came from a secret:
	// masked in answers and events, sealed at rest.
	SecretParams  []string
	SecretResults []string
	Labels        map[string]string
	Version       int64
	// EventSeq is the number of the task run's last status event (Run.EventSeq); Owed
	// are its status events not yet known to be recorded downstream.
	EventSeq int64
	Owed     []OwedEvent
}

// RunsAttempt reports whether t is running attempt on runner: whether that runner's
// heartbeat for it counts.
func (t *TaskRun) RunsAttempt(attempt int, runner string) bool {
	return t.Status == Running && t.Attempt == attempt && t.Runner == runner
}

// Phase is a task run's phase, derived from its status.
func (t *TaskRun) Phase() Phase {
	switch {
	case t.Status.Terminal():
		return Completed
	case t.Status == NotStarted:
		return Pending
	case t.Status == Ready:
		return Queued
	default:
		return PhaseRunning
	}
}

// Duration is how long the task run has taken, in milliseconds.
func (t *TaskRun) Duration(now time.Time) int64 {
	if t.StartTime.IsZero() {
		return 0
	}
	end := t.EndTime
	if end.IsZero() {
		end = now
	}
	return end.Sub(t.StartTime).Milliseconds()
}

// TaskRunID is the id of task run i of run.
func TaskRunID(run string, i int) string { return run + "." + strconv.Itoa(i) }

// ParseTaskRunID splits a task run id into its run's id and its index.
func ParseTaskRunID(id string) (run string, i int, ok bool) {
	dot := strings.LastIndexByte(id, '.')
	if dot <= 0 {
		return "", 0, false
	}
	i, err := strconv.Atoi(id[dot+1:])
	if err != nil || i < 0 {
		return "", 0, false
	}
	return id[:dot], i, true
}

// SecretDecision reports whether a decision task's value came from a secret.
func (t *TaskRun) SecretDecision() bool {
	return t.Decision != "" && slices.Contains(t.SecretParams, "value")
}

// Scrub masks, in a text the run shows (a status message, a log line), every secret value
// the run knows of.
func (r *Run) Scrub(s string) string {
	return ScrubText(s, r.Context.Secrets)
}

// ScrubText replaces each of values found in s by secrets.Mask, longest first so that a
// value holding another is masked whole.
func ScrubText(s string, values []string) string { return secrets.MaskText(s, values) }

// minSecretLeaf is the shortest string inside a secret object or list that is masked on
// its own: shorter ones ("id", "eu") would mask ordinary output without protecting anything.
const minSecretLeaf = 4

// SecretTexts are the texts a secret value may show as: the value as text and, for an
// object or a list, each string inside it (of minSecretLeaf bytes or more), which a
// reference such as `$(params.creds.password)` substitutes alone.
func SecretTexts(v any) []string {
	var out []string
	if s := Text(v); s != "" {
		out = append(out, s)
	}
	var leaves func(any)
	leaves = func(x any) {
		switch c := x.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(c)) {
				leaves(c[k])
			}
		case []any:
			for _, e := range c {
				leaves(e)
			}
		case string:
			if len(c) >= minSecretLeaf && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	switch v.(type) {
	case map[string]any, []any:
		leaves(v)
	}
	return out
}

// names is the set of a list of names.
func names(list []string) map[string]bool {
	if len(list) == 0 {
		return nil
	}
	out := make(map[string]bool, len(list))
	for _, n := range list {
		out[n] = true
	}
	return out
}

// setName adds name to the sorted list when on, removes it otherwise.
func setName(list []string, name string, on bool) []string {
	i, found := slices.BinarySearch(list, name)
	switch {
	case on && !found:
		return slices.Insert(list, i, name)
	case !on && found:
		return slices.Delete(list, i, i+1)
	}
	return list
}

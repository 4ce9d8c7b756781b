package engine

import (
	"context"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"go.opentelemetry.io/otel/propagation"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// What the engine asks of its stores, split by what each stores and declared here where
// it is used; every type they speak is the domain's. Each write is conditional where a
// concurrent writer could have moved first, and then fails with domain.ErrConflict.
type (
	// RunStore keeps runs and their task runs: those in flight, and the archive of those
	// that ended.
	RunStore interface {
		// CreateRun stores a new run with its task runs and definition: in flight, or
		// straight in the archive when it ended within its first step (no Owner).
		CreateRun(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun) error
		// FindRun reads a run without its definition; WorkflowRunNotFound when there is none.
		FindRun(ctx context.Context, id string) (*domain.Run, error)
		// FindDefinition reads the workflow version r runs.
		FindDefinition(ctx context.Context, r *domain.Run) (*domain.Definition, error)
		// FindTaskRuns reads the task runs of r, in definition order.
		FindTaskRuns(ctx context.Context, r *domain.Run) ([]*domain.TaskRun, error)
		// SaveStep stores a step of a run in flight: the changed task runs (indexes into
		// tasks), each on the version it was read at, and the run on its version. It moves
		// the versions in memory as the writes succeed.
		SaveStep(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun, changed []int) error
		// SaveTasks stores a step that leaves its run as stored: the changed task runs,
		// each on the version it was read at, provided the run is still at its version,
		// which does not move. A store may write the run as SaveStep does instead.
		SaveTasks(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun, changed []int) error
		// Archive moves a run that ended from the runs in flight to the archive; repeating
		// it completes an archive a crash cut short.
		Archive(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun) error
		// FindOwed answers at most limit runs put away whose Owed events were last sent
		// before before (at first, at their end), those sent longest ago first.
		FindOwed(ctx context.Context, before time.Time, limit int) ([]domain.OwedRun, error)
		// DelayOwed records that run, put away, sent the events it owes again at.
		DelayOwed(ctx context.Context, run string, at time.Time) error
		// ClearOwed drops, from each run put away in recorded, the Owed events of the
		// numbers it holds there; a run with none left owes nothing.
		ClearOwed(ctx context.Context, recorded map[string]map[int64]bool) error

		// ListInFlight lists the runs in flight f selects.
		ListInFlight(ctx context.Context, f domain.InFlightFilter) ([]domain.InFlight, error)
		// SetQueued marks whether a run in flight waits for a slot, moving its version.
		SetQueued(ctx context.Context, id string, queued bool) error
		// TakeOver moves a run in flight from replica from to owner; false when it is not
		// from's any more.
		TakeOver(ctx context.Context, id, from, owner string) (bool, error)
		// FindDescendants lists the runs in flight, not completed, below run id.
		FindDescendants(ctx context.Context, id string) ([]string, error)
		// FindStopped answers which of ids ended cancelled or timed out.
		FindStopped(ctx context.Context, ids []string) (map[string]bool, error)
	}

	// SlotStore keeps each team's concurrency slots: the runs holding one.
	SlotStore interface {
		// AcquireSlot gives run one of team's max slots; false when all are taken. Holding
		// a slot is membership of a set: acquiring or releasing twice is harmless.
		AcquireSlot(ctx context.Context, team, run string, max int) (bool, error)
		ReleaseSlot(ctx context.Context, team, run string) error
		SlotsTaken(ctx context.Context, team string) (int, error)
	}

	// ReplicaStore keeps the replicas of the runs service that are alive.
	ReplicaStore interface {
		// MarkAlive records that replica was alive at.
		MarkAlive(ctx context.Context, replica string, at time.Time) error
		// Replicas answers when each replica was last alive.
		Replicas(ctx context.Context) (map[string]time.Time, error)
		ForgetReplica(ctx context.Context, replica string) error
	}

	// ActionStore keeps the actions of approval and manual tasks.
	ActionStore interface {
		// CreateAction stores a new action; when one with its id is stored already (a
		// step recovered after a crash asks again), that one is kept as it is.
		CreateAction(ctx context.Context, a *domain.Action) error
		// FindAction reads one action; ACTION_NOT_FOUND when there is none.
		FindAction(ctx context.Context, id string) (*domain.Action, error)
		// UpdateAction applies fn to action id as stored and stores the result on the
		// version it was read at, reading again and applying fn anew when another writer
		// moved first. An error from fn stores nothing and is returned as it is.
		UpdateAction(ctx context.Context, id string, fn func(*domain.Action) error) (*domain.Action, error)
		// FindRunActions lists the actions of run, open or not, oldest first.
		FindRunActions(ctx context.Context, run string) ([]*domain.Action, error)
		// FindUnapplied lists the actions decided before before whose decision the run has
		// not taken (Applied false).
		FindUnapplied(ctx context.Context, before time.Time) ([]*domain.Action, error)
	}

	// LockStore keeps the teams' named locks.
	LockStore interface {
		// UpdateLock applies fn to the lock team/key as stored (a free lock, Version 0,
		// when there is no record) and stores the result on the version it was read at,
		// reading again and applying fn anew when another writer moved first. A lock that
		// fn leaves free is removed. An error from fn stores nothing.
		UpdateLock(ctx context.Context, team, key string, fn func(*domain.Lock) error) (*domain.Lock, error)
		// FindRunLocks lists the locks run holds or waits for.
		FindRunLocks(ctx context.Context, run string) ([]domain.Lock, error)
		// FindUntold lists the locks whose holder has not been told (Notified false).
		FindUntold(ctx context.Context) ([]domain.Lock, error)
	}

	// HeartbeatReader reads the runners' heartbeats stored for task runs (through any
	// replica).
	HeartbeatReader interface {
		// LastHeartbeat reads the last heartbeat of a task run; false when there is none.
		LastHeartbeat(ctx context.Context, taskRunID string) (domain.Heartbeat, bool, error)
	}
)

// What the engine asks of the rest of the service, which makes runs the engine cannot make
// itself and knows the teams' limits.
type (
	// RunStarter starts the runs a run's steps ask for: child runs of runworkflow tasks and
	// automatic retries of failed runs.
	RunStarter interface {
		// StartChild submits a child run and answers its id. An error that is a
		// *ChildRefused ends the task invalid; any other, failed.
		StartChild(ctx context.Context, c ChildRequest) (string, error)
		// RetryRun submits the automatic retry of run id, once however often it is asked.
		RetryRun(ctx context.Context, id string) error
	}

	// Schedules makes the runOnce schedules runscheduledworkflow tasks ask for (the
	// schedules service).
	Schedules interface {
		// CreateSchedule makes the schedule s asks for, or answers the one made earlier
		// under s.Key. A refusal of the request itself is an apperr error of a client
		// kind (the workflow not found, a date in the past): it ends the task failed. Any
		// other error is the service's, and the task asks again later.
		CreateSchedule(ctx context.Context, s ScheduleRequest) (ScheduleMade, error)
	}

	// Limits tells a team's concurrency limit.
	Limits interface {
		MaxConcurrent(ctx context.Context, team string) (int, error)
	}

	// Publisher publishes messages and returns once the broker has them all.
	Publisher interface {
		Publish(ctx context.Context, msgs []Message) error
	}
)

// Message is one event owed to a topic (unprefixed), with its partition key.
type Message struct {
	Topic string
	Key   string
	Event event.Event
	// Trace is the trace context the message is published under (traces.go); nil
	// publishes it under the publisher's.
	Trace propagation.MapCarrier
}

// Sealer seals the attempts that carry secrets for the runners (the shared
// BATON_SECRET_KEY); *secrets.Box is one.
type Sealer = events.Sealer

// ChildRequest is what a runworkflow task asks to be started.
type ChildRequest = domain.ChildRequest

// ChildRefused is a child run that a limit forbids: its task ends invalid.
type ChildRefused struct{ Reason string }

func (e *ChildRefused) Error() string { return e.Reason }

// ScheduleRequest is the runOnce schedule a runscheduledworkflow task asks for.
type ScheduleRequest struct {
	// Team is the run's; Key makes the request idempotent: one schedule per task run,
	// however often its step is sent.
	Team, Key string
	// Workflow, At, Timezone, Params (Secret naming those that came from a secret) and
	// Labels are what the task asks for (domain.ScheduledRun).
	Workflow string
	At       time.Time
	Timezone string
	Params   map[string]any
	Secret   []string
	Labels   map[string]string
	// Name and Description name the schedule after the task and its run.
	Name, Description string
	// By is the run's initiator: the schedule's runs are started on their behalf.
	By domain.Initiator
}

// ScheduleMade is the schedule a ScheduleRequest made, or found made under its key.
type ScheduleMade struct {
	ID string
	At time.Time
	// TriggerDisabled says that the workflow's schedule trigger is off: the schedule does
	// not fire until it is turned on.
	TriggerDisabled bool
}

// QueueStore keeps the attempts of `generic` tasks waiting for a worker over HTTP
// (domain.QueuedAttempt).
type QueueStore interface {
	// PutQueued stores queued attempts; one stored already under its id is kept as it is.
	PutQueued(ctx context.Context, qs []domain.QueuedAttempt) error
	// FindQueued answers at most limit attempts waiting in queue of team, oldest first.
	FindQueued(ctx context.Context, team, queue string, limit int) ([]domain.QueuedAttempt, error)
	// DeleteQueued deletes the queued attempts of ids; those not stored are no error.
	DeleteQueued(ctx context.Context, ids ...string) error
}

package engine

import (
	"context"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/mongostore"
)

// What the engine asks of other services, declared here where it is used.
type (
	// Definitions reads a workflow version, secrets unmasked (the workflows service).
	Definitions interface {
		Snapshot(ctx context.Context, team, workflow string, version int) (*domain.Definition, error)
	}
	// Catalogue reads a catalogue task's version (the tasks service).
	Catalogue interface {
		TaskSpec(ctx context.Context, ref string, version int) (*domain.Spec, int, error)
	}
	// Contexts reads what a team's runs resolve against and are limited by (identity).
	Contexts interface {
		RunContext(ctx context.Context, team string) (TeamContext, error)
	}
	// Publisher publishes events and returns once the broker has them.
	Publisher interface {
		PublishMany(ctx context.Context, topic string, msgs ...kafkax.Message) error
	}
)

// TeamContext is a team's parameters, limits and settings, as runs need them.
type TeamContext struct {
	Global             map[string]any
	Team               map[string]any
	Secrets            []string
	MaxMonthly         int
	MaxDuration        int
	MaxConcurrent      int
	TaskDefaultTimeout int
	// MaxDepth is how deep child runs may nest (the runs.maxDepth setting); 0 is
	// domain.DefaultMaxDepth.
	MaxDepth int
	// MaxTreeRuns is how many runs one run may start below it, at every depth together
	// (the runs.maxTreeRuns setting); 0 is domain.DefaultMaxTreeRuns.
	MaxTreeRuns int
}

// maxDepth is the depth limit of the team's child runs.
func (tc TeamContext) maxDepth() int {
	if tc.MaxDepth <= 0 {
		return domain.DefaultMaxDepth
	}
	return tc.MaxDepth
}

// maxTreeRuns is the limit of runs below one run of the team.
func (tc TeamContext) maxTreeRuns() int {
	if tc.MaxTreeRuns <= 0 {
		return domain.DefaultMaxTreeRuns
	}
	return tc.MaxTreeRuns
}

// Store is the runs database as the engine uses it.
type Store interface {
	CreateRun(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun) error
	FindRun(ctx context.Context, id string, withDefinition bool) (*domain.Run, error)
	FindTasks(ctx context.Context, r *domain.Run) ([]*domain.TaskRun, error)
	FindTask(ctx context.Context, id string) (*domain.TaskRun, error)
	SaveStep(ctx context.Context, r *domain.Run, all []*domain.TaskRun, changed []int, runFirst bool) error
	Archive(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun) error
	Finalize(ctx context.Context, id string) (bool, error)
	Heartbeat(ctx context.Context, taskRunID string, attempt int, runner string, at time.Time) (*domain.TaskRun, bool, error)
	FindRuns(ctx context.Context, f mongostore.Filter, p page.Request) ([]*domain.Run, int64, error)
	CountRuns(ctx context.Context, f mongostore.Filter) (map[string]int64, error)

	SetQueued(ctx context.Context, id string, queued bool) error
	ListActive(ctx context.Context) ([]mongostore.Active, error)
	FindActive(ctx context.Context, team, workflow string) ([]string, error)
	FindDescendants(ctx context.Context, id string) ([]string, error)
	CountDescendants(ctx context.Context, id string) (int64, error)
	FindStopped(ctx context.Context, ids []string) (map[string]bool, error)
	HasLiveRuns(ctx context.Context, team string) (bool, error)
	DeleteTeam(ctx context.Context, team string) error
	TakeOver(ctx context.Context, id, from, owner string) (bool, error)
	Beat(ctx context.Context, replica string, at time.Time) error
	Replicas(ctx context.Context) (map[string]time.Time, error)
	ForgetReplica(ctx context.Context, replica string) error
	AcquireSlot(ctx context.Context, team, run string, max int) (bool, error)
	SlotsTaken(ctx context.Context, team string) (int, error)
	ReleaseSlot(ctx context.Context, team, run string) error
	Usage(ctx context.Context, team, month string) (mongostore.Usage, error)
	CountMonthly(ctx context.Context, team, month string, max int) (bool, error)
	Claim(ctx context.Context, key, run string, now time.Time) (string, error)
	PurgeKeys(ctx context.Context, now time.Time) error
	LastBeat(ctx context.Context, taskRunID string) (mongostore.Beat, bool, error)
	SaveBeat(ctx context.Context, taskRunID string, attempt int, runner string, at time.Time) error
	PurgeBeats(ctx context.Context, now time.Time) error

	AppendLog(ctx context.Context, taskRunID string, attempt, seq int, text string) error
}

// message is one event owed to a topic.
type message struct {
	topic string
	key   string
	event event.Event
}

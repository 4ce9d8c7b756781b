package app

import (
	"context"

	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// DefinitionStore keeps workflows (or templates): per namespace, a catalog of heads that
// changes only through UpdateCatalog, and immutable revisions holding versions' content.
type DefinitionStore interface {
	// Catalog returns the namespace's current catalog, empty (Seq 0) before its first
	// change. The catalog is shared: never change it.
	Catalog(ctx context.Context, ns domain.Namespace) (*domain.Catalog, error)
	// UpdateCatalog calls fn with the catalog following the current one and stores it with
	// the events fn owes, unless another writer stored a catalog first; then it starts
	// again with that one, so fn may run more than once. It gives up with
	// CONCURRENT_MODIFICATION after a bounded number of attempts.
	UpdateCatalog(ctx context.Context, ns domain.Namespace, fn func(next *domain.Catalog) ([]outbox.Entry, error)) (*domain.Catalog, error)
	// InsertRevision stores r under the first revision number from r.Rev that is free and
	// returns that number: a free number means no other writer can be using it.
	InsertRevision(ctx context.Context, ns domain.Namespace, r domain.Revision) (int, error)
	// FindRevision reads one revision, with as much of its tasks as load asks.
	FindRevision(ctx context.Context, ns domain.Namespace, name string, version, rev int, load domain.Load) (domain.Revision, error)
	// CollectRevision removes one revision, later. It is garbage collection: nothing reads
	// revisions the current catalog does not name, so no save or delete waits for it, and
	// a revision left behind (the process stopped first) only takes room.
	CollectRevision(ns domain.Namespace, name string, version, rev int)
	// DeleteNamespace removes a team incarnation's catalogs and revisions.
	DeleteNamespace(ctx context.Context, ns domain.Namespace) error
}

// TaskResolver asks the tasks service which catalogue task version a taskRef names.
type TaskResolver interface {
	// ResolveTask returns task ref (a global task name, or `<team>/<task>`) at version, the
	// latest when version is 0. A task or version the catalogue does not have fails with an
	// error of reason TASK_NOT_FOUND; an unreachable tasks service with one of kind
	// Unavailable.
	ResolveTask(ctx context.Context, ref string, version int) (domain.TaskDefinition, error)
}

// QuotaSource tells the workflow-count limit of a team. Identity owns the limits (the
// peers package asks it); DefaultQuota is a fixed limit for tests and tools.
type QuotaSource interface {
	MaxWorkflowCount(ctx context.Context, team string) (int, error)
}

// DefaultQuota is the same limit for every team: the seeded default, 100, unless set.
type DefaultQuota int

// DefaultMaxWorkflowCount is the seeded `maxWorkflowCount` (API.md §3, Quotas).
const DefaultMaxWorkflowCount = 100

// MaxWorkflowCount returns the limit.
func (q DefaultQuota) MaxWorkflowCount(context.Context, string) (int, error) {
	if q == 0 {
		return DefaultMaxWorkflowCount, nil
	}
	return int(q), nil
}

// QuotaCounter counts a team's workflows, the counter the workflows service owns and
// enforces (API.md §3): a conditional increment that never passes the limit, however many
// creates race.
type QuotaCounter interface {
	// ReserveWorkflow counts one more workflow unless the team has limit already; false
	// means the limit is reached.
	ReserveWorkflow(ctx context.Context, t domain.Team, limit int) (bool, error)
	// ReleaseWorkflow counts one workflow less: a create that failed, or a delete.
	ReleaseWorkflow(ctx context.Context, t domain.Team) error
}

// RunChecker asks the runs service about a workflow's runs before it is deleted (peers.Runs);
// NoRuns answers for an installation without one.
type RunChecker interface {
	// ActiveRuns counts the workflow's runs that are not completed.
	ActiveRuns(ctx context.Context, team, workflow string) (int, error)
	// CancelRuns cancels them, for `?force=true`.
	CancelRuns(ctx context.Context, team, workflow string) error
}

// NoRuns is the RunChecker of an installation without a runs service.
type NoRuns struct{}

// ActiveRuns reports none.
func (NoRuns) ActiveRuns(context.Context, string, string) (int, error) { return 0, nil }

// CancelRuns has nothing to cancel.
func (NoRuns) CancelRuns(context.Context, string, string) error { return nil }

// ParamSource lists the names of the parameter layers identity owns, for
// available-parameters. It acts for the caller of its context.
type ParamSource interface {
	GlobalParams(ctx context.Context) ([]string, error)
	TeamParams(ctx context.Context, team string) ([]string, error)
}

// NoParams is a ParamSource without global or team parameters.
type NoParams struct{}

// GlobalParams returns none.
func (NoParams) GlobalParams(context.Context) ([]string, error) { return nil, nil }

// TeamParams returns none.
func (NoParams) TeamParams(context.Context, string) ([]string, error) { return nil, nil }

// Relay is told when events were stored, so they leave at once rather than at its next sweep.
type Relay interface{ Nudge() }

// Package app holds the runs service's use cases: submitting, starting, cancelling,
// finalizing and retrying runs, reading and searching them, their logs and insights, the
// runners' claims, heartbeats and reports, and what other services ask before deleting a
// workflow or a team. It drives the engine (internal/engine), which moves the runs, and
// reads the stores through the ports declared here.
package app

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/engine"
	"github.com/baton-flow/baton/services/runs/internal/view"
)

// What the use cases ask of other services, declared here where it is used.
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
	// Tokens mints and checks runs' callback tokens (*auth.Signer).
	Tokens interface {
		RunToken(run string) string
	}
)

// What the use cases ask of the stores, beyond what the engine asks (engine.RunStore,
// engine.SlotStore, engine.HeartbeatReader), split by what each stores.
type (
	// RunStore keeps runs and task runs.
	RunStore interface {
		engine.RunStore
		// FindTaskRun reads one task run; TaskRunNotFound when there is none.
		FindTaskRun(ctx context.Context, id string) (*domain.TaskRun, error)
		// FinalizeArchived moves a run in the archive from completed to finalized; false
		// when it is not completed.
		FinalizeArchived(ctx context.Context, id string) (bool, error)
		// FindRuns answers one page of the runs f selects, by creation date, and how many
		// it selects in all; CountRuns counts them by status.
		FindRuns(ctx context.Context, f domain.RunFilter, p page.Request) ([]*domain.Run, int64, error)
		CountRuns(ctx context.Context, f domain.RunFilter) (map[string]int64, error)
		// Insight aggregates the runs f selects as of now, listing the newest maxRuns.
		Insight(ctx context.Context, f domain.RunFilter, now time.Time, maxRuns int) (domain.Insight, error)
		// FindUnfinished lists the ids of team's runs not completed, of workflow unless
		// it is empty.
		FindUnfinished(ctx context.Context, team, workflow string) ([]string, error)
		// CountDescendants counts the runs below run id, in flight or ended.
		CountDescendants(ctx context.Context, id string) (int64, error)
		// HasLiveRuns reports whether a run of team is in flight or not yet put away.
		HasLiveRuns(ctx context.Context, team string) (bool, error)
		// DeleteTeamRuns removes what team's ended runs left: runs, task runs, logs,
		// heartbeats.
		DeleteTeamRuns(ctx context.Context, team string) error
	}

	// QuotaStore keeps the teams' run counters: concurrency slots and monthly counts.
	QuotaStore interface {
		engine.SlotStore
		// CountMonthly counts run against team's month ("2006-01") unless max are counted;
		// false at the limit. The count is held for run until RunStored or
		// GiveBackMonthly says what became of it.
		CountMonthly(ctx context.Context, team, month, run string, max int) (bool, error)
		// CountMonthlyOnce is CountMonthly for a run an earlier submit may have counted
		// (one with the same idempotency key): a count still held for run is taken as
		// this one's. added says whether this call counted it.
		CountMonthlyOnce(ctx context.Context, team, month, run string, max int) (ok, added bool, err error)
		// RunStored says run, counted in month, is stored: its count stays and is no
		// longer held. The store may record it with a later write.
		RunStored(ctx context.Context, team, month, run string) error
		// GiveBackMonthly uncounts run from team's month if its count is still held;
		// false when it is not (given back already, or its run stored).
		GiveBackMonthly(ctx context.Context, team, month, run string) (bool, error)
		// HeldMonthly lists the counts held since before before.
		HeldMonthly(ctx context.Context, before time.Time) ([]domain.HeldCount, error)
		// SettleMonthly writes what RunStored said and no write has recorded yet.
		SettleMonthly(ctx context.Context) error
		Usage(ctx context.Context, team, month string) (domain.QuotaUsage, error)
		// DeleteTeamQuotas forgets team's counters.
		DeleteTeamQuotas(ctx context.Context, team string) error
	}

	// KeyStore keeps idempotency keys, each naming the run it made.
	KeyStore interface {
		// HoldKey reserves key for run, and answers the run that holds it: run, unless the
		// key named another run within the keys' life.
		HoldKey(ctx context.Context, key, run string, now time.Time) (string, error)
		// PurgeKeys forgets the keys past their life.
		PurgeKeys(ctx context.Context, now time.Time) error
		// DeleteTeamKeys forgets team's keys.
		DeleteTeamKeys(ctx context.Context, team string) error
	}

	// ActionStore keeps the actions of approval and manual tasks.
	ActionStore interface {
		engine.ActionStore
		// FindActions answers one page of the actions f selects, in order s, and how many
		// it selects in all.
		FindActions(ctx context.Context, f domain.ActionFilter, s domain.ActionSort, p page.Request) ([]*domain.Action, int64, error)
		// CountActions counts the actions f selects for a summary.
		CountActions(ctx context.Context, f domain.ActionFilter) (domain.ActionCounts, error)
		// DeleteTeamActions forgets team's actions.
		DeleteTeamActions(ctx context.Context, team string) error
	}

	// LockStore keeps the teams' named locks.
	LockStore interface {
		engine.LockStore
		// DeleteTeamLocks forgets team's locks.
		DeleteTeamLocks(ctx context.Context, team string) error
	}

	// HeartbeatStore keeps the last heartbeat of each running attempt.
	HeartbeatStore interface {
		engine.HeartbeatReader
		SaveHeartbeat(ctx context.Context, taskRunID string, b domain.Heartbeat) error
		// PurgeHeartbeats forgets heartbeats older than before.
		PurgeHeartbeats(ctx context.Context, before time.Time) error
	}

	// LogStore keeps task-run logs as chunks.
	LogStore interface {
		// AppendLog stores one chunk of an attempt's log; a chunk stored twice is kept once.
		AppendLog(ctx context.Context, taskRunID string, attempt, seq int, text string) error
		// ReadLog answers the chunks of a log from a cursor on, through attempt attempts,
		// and the cursor after them.
		ReadLog(ctx context.Context, taskRunID string, attempts int, from domain.LogCursor) (string, domain.LogCursor, error)
	}
)

// Stores are every store the service keeps.
type Stores struct {
	Runs       RunStore
	Quotas     QuotaStore
	Keys       KeyStore
	Heartbeats HeartbeatStore
	Logs       LogStore
	Replicas   engine.ReplicaStore
	Actions    ActionStore
	Locks      LockStore
	// Queues keeps the attempts waiting for workers over HTTP; nil serves no such worker.
	Queues engine.QueueStore
}

// RunView and TaskRunView are the contract's WorkflowRun and TaskRun, as answered.
type (
	RunView     = view.Run
	TaskRunView = view.TaskRun
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
	// PreventSelfApproval keeps a run's initiator from approving it (the setting
	// actions.preventSelfApproval).
	PreventSelfApproval bool
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

// Config tunes the service's use cases and its engine.
type Config struct {
	Engine engine.Config
	// PublicURL is the gateway's base URL, for the callback URLs given to tasks.
	PublicURL string
	// ContextTTL is how long a team's run context is cached; default 5s.
	ContextTTL time.Duration
	Logger     *slog.Logger
}

// Deps are what the use cases work with.
type Deps struct {
	Stores      Stores
	Publisher   engine.Publisher
	Definitions Definitions
	Catalogue   Catalogue
	Contexts    Contexts
	Approvers   Approvers
	// Tokens mints each run's callback token (its context param callback-token).
	Tokens Tokens
	// Schedules makes the schedules runscheduledworkflow tasks ask for.
	Schedules engine.Schedules
	// Sealer seals the attempts that carry secrets for the runners, and opens the results
	// they send back sealed (the shared BATON_SECRET_KEY).
	Sealer engine.Sealer
}

// App is the runs service's use cases.
type App struct {
	cfg       Config
	engine    *engine.Engine
	runs      RunStore
	quotas    QuotaStore
	keys      KeyStore
	beats     HeartbeatStore
	logs      LogStore
	acts      ActionStore
	locks     LockStore
	queues    engine.QueueStore
	defs      Definitions
	approvers Approvers
	tokens    Tokens
	cat       Catalogue
	ctxs      *contextCache
	box       engine.Sealer
	log       *slog.Logger
	now       func() time.Time
	// stored remembers when each attempt's heartbeat was last stored here.
	stored beatCache
}

// New returns the use cases over their stores and peers, with the engine they drive; Run
// must be running for runs to move.
func New(cfg Config, deps Deps) *App {
	cfg.ContextTTL = cmp.Or(cfg.ContextTTL, 5*time.Second)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Engine.Logger = cmp.Or(cfg.Engine.Logger, cfg.Logger)
	acts := legacyActions{deps.Stores.Actions}
	a := &App{
		cfg: cfg, runs: deps.Stores.Runs, quotas: deps.Stores.Quotas, keys: deps.Stores.Keys,
		beats: deps.Stores.Heartbeats, logs: deps.Stores.Logs, defs: deps.Definitions, cat: deps.Catalogue,
		acts: acts, locks: deps.Stores.Locks, queues: deps.Stores.Queues, approvers: deps.Approvers, tokens: deps.Tokens,
		ctxs: newContextCache(deps.Contexts, cfg.ContextTTL), box: deps.Sealer, log: cfg.Logger, now: time.Now,
	}
	a.engine = engine.New(cfg.Engine, engine.Deps{
		Runs: deps.Stores.Runs, Slots: deps.Stores.Quotas, Replicas: deps.Stores.Replicas, Heartbeats: deps.Stores.Heartbeats,
		Actions: acts, Locks: deps.Stores.Locks, Queues: deps.Stores.Queues,
		Publisher: deps.Publisher, Starter: a, Schedules: deps.Schedules, Limits: a.ctxs, Sealer: deps.Sealer,
	})
	return a
}

// purgeEvery is how often expired idempotency keys and old heartbeats are removed from the
// stores; pruneEvery how often the heartbeats stored lately are forgotten in memory.
const (
	purgeEvery = time.Hour
	pruneEvery = 2 * time.Second
)

// heartbeatTTL is how long a heartbeat is kept: far longer than any runner lease.
const heartbeatTTL = 24 * time.Hour

// Run moves runs until ctx ends, and removes what outlived its use now and then.
func (a *App) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	var err error
	wg.Go(func() { err = a.engine.Run(ctx) })
	wg.Go(func() {
		tick := time.NewTicker(pruneEvery)
		defer tick.Stop()
		lastPurge, lastReconcile := a.now(), a.now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			now := a.now()
			a.stored.prune(now.Add(-a.beatEvery()))
			if now.Sub(lastReconcile) >= reconcileEvery {
				lastReconcile = now
				if err := a.ReconcileMonthly(ctx, now); err != nil && ctx.Err() == nil {
					a.log.Warn("cannot reconcile the monthly counts", "error", err)
				}
			} else if err := a.quotas.SettleMonthly(ctx); err != nil && ctx.Err() == nil {
				a.log.Warn("cannot record counted runs stored", "error", err)
			}
			if now.Sub(lastPurge) < purgeEvery {
				continue
			}
			lastPurge = now
			if err := a.keys.PurgeKeys(ctx, now); err != nil && ctx.Err() == nil {
				a.log.Warn("cannot purge idempotency keys", "error", err)
			}
			if err := a.beats.PurgeHeartbeats(ctx, now.Add(-heartbeatTTL)); err != nil && ctx.Err() == nil {
				a.log.Warn("cannot purge heartbeats", "error", err)
			}
		}
	})
	wg.Wait()
	return err
}

// contextCache keeps teams' run contexts briefly: a burst of submits asks identity once,
// those that find the context missing or expired together waiting for one answer.
type contextCache struct {
	src    Contexts
	ttl    time.Duration
	mu     sync.Mutex
	m      map[string]cachedContext
	flight singleflight.Group
}

type cachedContext struct {
	tc  TeamContext
	exp time.Time
}

func newContextCache(src Contexts, ttl time.Duration) *contextCache {
	return &contextCache{src: src, ttl: ttl, m: map[string]cachedContext{}}
}

func (c *contextCache) get(ctx context.Context, team string) (TeamContext, error) {
	c.mu.Lock()
	if v, ok := c.m[team]; ok && time.Now().Before(v.exp) {
		c.mu.Unlock()
		return v.tc, nil
	}
	c.mu.Unlock()
	// One read for all who missed: identity answered each of a burst of submits on its own
	// at every expiry, and its reads queued behind each other. The read outlives the first
	// caller's end, not the others' (refreshBound bounds it); each waits as long as its
	// own context lets it.
	ch := c.flight.DoChan(team, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshBound)
		defer cancel()
		return c.fresh(ctx, team)
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return TeamContext{}, res.Err
		}
		return res.Val.(TeamContext), nil
	case <-ctx.Done():
		return TeamContext{}, ctx.Err()
	}
}

// refreshBound bounds a read of a team's context shared by the callers that missed it.
const refreshBound = 30 * time.Second

// fresh reads a team's context from its source, not the cache, and caches it.
func (c *contextCache) fresh(ctx context.Context, team string) (TeamContext, error) {
	tc, err := c.src.RunContext(ctx, team)
	if err != nil {
		return TeamContext{}, err
	}
	c.mu.Lock()
	c.m[team] = cachedContext{tc: tc, exp: time.Now().Add(c.ttl)}
	c.mu.Unlock()
	return tc, nil
}

// MaxConcurrent implements engine.Limits.
func (c *contextCache) MaxConcurrent(ctx context.Context, team string) (int, error) {
	tc, err := c.get(ctx, team)
	return tc.MaxConcurrent, err
}

// TimeFormat is the contract's format for times in bodies.
const TimeFormat = view.TimeFormat

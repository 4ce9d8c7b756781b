package app

import (
	"context"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/view"
)

// Get reads a run as stored, with its task runs when withTasks.
func (a *App) Get(ctx context.Context, id string, withTasks bool) (RunView, error) {
	r, err := a.runs.FindRun(ctx, id)
	if err != nil {
		return RunView{}, err
	}
	var tasks []*domain.TaskRun
	if withTasks {
		if tasks, err = a.runs.FindTaskRuns(ctx, r); err != nil {
			return RunView{}, err
		}
	}
	return view.OfRun(r, tasks, a.now()), nil
}

// GetTeamRun reads a run of team; another team's run is not found.
func (a *App) GetTeamRun(ctx context.Context, team, id string, withTasks bool) (RunView, error) {
	v, err := a.Get(ctx, id, withTasks)
	if err != nil {
		return RunView{}, err
	}
	if v.Team != team {
		return RunView{}, apperr.New(apperr.WorkflowRunNotFound, "Workflow run '%s' was not found.", id)
	}
	return v, nil
}

// FindRuns answers one page of the runs f selects, and how many it selects in all.
func (a *App) FindRuns(ctx context.Context, f domain.RunFilter, p page.Request) ([]RunView, int64, error) {
	runs, total, err := a.runs.FindRuns(ctx, f, p)
	if err != nil {
		return nil, 0, err
	}
	now := a.now()
	out := make([]RunView, len(runs))
	for i, r := range runs {
		out[i] = view.OfRun(r, nil, now)
	}
	return out, total, nil
}

// CountRuns counts the runs f selects by status, every status named, and in all.
func (a *App) CountRuns(ctx context.Context, f domain.RunFilter) (map[string]int64, error) {
	counts, err := a.runs.CountRuns(ctx, f)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{"all": 0}
	for _, s := range domain.Statuses {
		out[string(s)] = counts[string(s)]
		out["all"] += counts[string(s)]
	}
	return out, nil
}

// Insight aggregates the runs f selects as of now, listing the newest maxRuns of them.
func (a *App) Insight(ctx context.Context, f domain.RunFilter, now time.Time, maxRuns int) (domain.Insight, error) {
	return a.runs.Insight(ctx, f, now, maxRuns)
}

// Usage is what a team uses of its run quotas.
type Usage struct {
	// Monthly counts the runs since monthStart; Concurrent those holding a slot.
	Monthly, Concurrent int
	// TotalDuration and MedianDuration are over the runs created since monthStart, in ms.
	TotalDuration, MedianDuration int64
}

// Usage tells what team uses of its run quotas in the month starting at monthStart (UTC):
// the counters the engine enforces, and, withDurations, the durations of the month's runs
// (a pass over them).
func (a *App) Usage(ctx context.Context, team string, monthStart time.Time, withDurations bool) (Usage, error) {
	u, err := a.quotas.Usage(ctx, team, monthStart.Format("2006-01"))
	if err != nil {
		return Usage{}, err
	}
	if !withDurations {
		return Usage{Monthly: u.Monthly, Concurrent: u.Concurrent}, nil
	}
	in, err := a.runs.Insight(ctx, domain.RunFilter{Team: team, From: &monthStart}, a.now(), 0)
	if err != nil {
		return Usage{}, err
	}
	return Usage{Monthly: u.Monthly, Concurrent: u.Concurrent, TotalDuration: in.TotalDuration, MedianDuration: in.MedianDuration}, nil
}

// LogSource is what a task run's log reader needs to know of it.
type LogSource struct {
	// Team and Workflow are its run's, for the caller's rights.
	Team, Workflow string
	// Attempts is how many attempts it has made; Ended is set once it has ended, when its
	// log will grow no more.
	Attempts int
	Ended    bool
}

// TaskLog tells where task run id stands, for reading its log.
func (a *App) TaskLog(ctx context.Context, id string) (LogSource, error) {
	t, err := a.runs.FindTaskRun(ctx, id)
	if err != nil {
		return LogSource{}, err
	}
	r, err := a.runs.FindRun(ctx, t.RunID)
	if err != nil {
		return LogSource{}, err
	}
	return LogSource{Team: r.Team, Workflow: r.Workflow, Attempts: t.Attempt, Ended: t.Status.Terminal()}, nil
}

// TaskProgress tells how many attempts task run id has made and whether it has ended.
func (a *App) TaskProgress(ctx context.Context, id string) (attempts int, ended bool, err error) {
	t, err := a.runs.FindTaskRun(ctx, id)
	if err != nil {
		return 0, false, err
	}
	return t.Attempt, t.Status.Terminal(), nil
}

// ReadLog answers the chunks of task run id's log from a cursor on, through attempt
// attempts, and the cursor after them.
func (a *App) ReadLog(ctx context.Context, id string, attempts int, from domain.LogCursor) (string, domain.LogCursor, error) {
	return a.logs.ReadLog(ctx, id, attempts, from)
}

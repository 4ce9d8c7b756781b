package httpapi

import (
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/workflowid"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// insightWindow is the window of an insight without fromDate.
const insightWindow = 30 * 24 * time.Hour

// insightRuns bounds the run summaries of an insight: the newest this many.
const insightRuns = 1000

// Insight is the contract's WorkflowRunInsight.
type Insight struct {
	TotalRuns      int64        `json:"totalRuns"`
	ConcurrentRuns int64        `json:"concurrentRuns"`
	TotalDuration  int64        `json:"totalDuration"`
	MedianDuration int64        `json:"medianDuration"`
	Runs           []RunSummary `json:"runs"`
}

// RunSummary is one run of an Insight.
type RunSummary struct {
	ID           string        `json:"id"`
	CreationDate string        `json:"creationDate"`
	Duration     int64         `json:"duration"`
	Status       domain.Status `json:"status"`
	// WorkflowRef names the run's workflow, as on the run: v4 clients count runs by it.
	WorkflowRef  string `json:"workflowRef"`
	WorkflowName string `json:"workflowName"`
}

// insights aggregates a team's runs created in the window [fromDate, toDate] (default the
// last 30 days up to toDate, or now), of the workflows and statuses asked.
func (h *handlers) insights(c *fiber.Ctx) error {
	team := c.Params("team")
	p, err := auth.Require(c.UserContext(), auth.Scope{Team: team}, "insights", "read")
	if err != nil {
		return err
	}
	f := domain.RunFilter{Team: team}
	if f.From, err = httpx.EpochMillis(c, "fromDate"); err != nil {
		return err
	}
	if f.To, err = httpx.EpochMillis(c, "toDate"); err != nil {
		return err
	}
	now := time.Now()
	if f.From == nil {
		from := now.Add(-insightWindow)
		if f.To != nil {
			from = f.To.Add(-insightWindow)
		}
		f.From = &from
	}
	if f.Statuses, err = oneOf(c, "statuses", domain.Statuses); err != nil {
		return err
	}
	// v4 clients filter by the workflows' ids.
	f.Workflows = workflowid.ResolveAll(team, httpx.List(c, "workflows"))
	if p.Workflow != "" {
		// A workflow's token sees that workflow's runs only.
		f.None = len(f.Workflows) > 0 && !slices.Contains(f.Workflows, p.Workflow)
		f.Workflows = []string{p.Workflow}
	}
	in, err := h.app.Insight(c.UserContext(), f, now, insightRuns)
	if err != nil {
		return err
	}
	out := Insight{TotalRuns: in.Total, ConcurrentRuns: in.Running, TotalDuration: in.TotalDuration,
		MedianDuration: in.MedianDuration, Runs: make([]RunSummary, len(in.Runs))}
	for i, r := range in.Runs {
		out.Runs[i] = RunSummary{ID: r.ID, CreationDate: r.CreationDate.UTC().Format(app.TimeFormat),
			Duration: r.Duration, Status: r.Status, WorkflowRef: r.Workflow, WorkflowName: r.Workflow}
	}
	return c.JSON(out)
}

// usage tells identity what the team uses of its run quotas: the counters the engine
// enforces, and, unless `counters=true` asks for those alone, the durations of the month's
// runs.
func (h *handlers) usage(c *fiber.Ctx) error {
	team := c.Params("team")
	month := runsapi.MonthStart(time.Now().UTC())
	counters, err := httpx.Bool(c, "counters", false)
	if err != nil {
		return err
	}
	u, err := h.app.Usage(c.UserContext(), team, month, !counters)
	if err != nil {
		return err
	}
	return c.JSON(runsapi.Usage{CurrentRuns: u.Monthly, CurrentConcurrentRuns: u.Concurrent,
		CurrentRunTotalDuration: u.TotalDuration, CurrentRunMedianDuration: u.MedianDuration,
		MonthlyResetDate: month.AddDate(0, 1, 0)})
}

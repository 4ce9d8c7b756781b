package client

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// RunQuery filters a search of a team's runs; the zero value lists them all. Runs are
// answered without their tasks.
type RunQuery struct {
	Labels       map[string]string
	Statuses     []string // see the Status constants
	Phases       []string // see the Phase constants
	WorkflowRuns []string // run ids
	Workflows    []string // names, `<team>/<name>` or ids
	Triggers     []string // manual, schedule, webhook, event, codehost, chat, task, retry
	From, To     time.Time
	Order        string // direction on creationDate: ASC or DESC
	Page         int
	Limit        int // 1 to 1000 (default 1000)
}

func (q RunQuery) values() query {
	return newQuery().labels(q.Labels).list("statuses", q.Statuses).list("phase", q.Phases).
		list("workflowruns", q.WorkflowRuns).list("workflows", q.Workflows).list("triggers", q.Triggers).
		time("fromDate", q.From).time("toDate", q.To).str("order", q.Order).page(q.Page, q.Limit)
}

// RunCountQuery filters CountWorkflowRuns; without dates it counts all time.
type RunCountQuery struct {
	Labels    map[string]string
	Workflows []string
	From, To  time.Time
}

// SubmitWorkflow submits a run of workflow in team (req may be nil: the workflow's
// defaults). With start the run is started within the request when a concurrency slot
// is free; else the engine starts it as soon as one is. A repeated IdempotencyKey answers
// the first run. submitWorkflow.
func (c *Client) SubmitWorkflow(ctx context.Context, team, workflow string, req *WorkflowSubmitRequest, start bool) (*WorkflowRun, error) {
	q := newQuery()
	if start {
		q.str("start", "true")
	}
	var body any
	if req != nil {
		body = req
	}
	var out WorkflowRun
	_, err := c.call(ctx, http.MethodPost, p("team", team, "workflow", workflow, "submit"), q.values(), body, &out)
	return ret(&out, err)
}

// CountWorkflowRuns counts team's runs by status. countWorkflowRuns.
func (c *Client) CountWorkflowRuns(ctx context.Context, team string, q RunCountQuery) (*WorkflowRunCount, error) {
	v := newQuery().labels(q.Labels).list("workflows", q.Workflows).time("fromDate", q.From).time("toDate", q.To)
	var out WorkflowRunCount
	_, err := c.call(ctx, http.MethodGet, p("team", team, "workflowrun", "count"), v.values(), nil, &out)
	return ret(&out, err)
}

// QueryWorkflowRuns reads one page of team's runs. queryWorkflowRuns.
func (c *Client) QueryWorkflowRuns(ctx context.Context, team string, q RunQuery) (*Page[WorkflowRun], error) {
	var out Page[WorkflowRun]
	_, err := c.call(ctx, http.MethodGet, p("team", team, "workflowrun", "query"), q.values().values(), nil, &out)
	return ret(&out, err)
}

// WorkflowRuns yields every run of team matching q, page after page from q.Page.
func (c *Client) WorkflowRuns(ctx context.Context, team string, q RunQuery) iter.Seq2[WorkflowRun, error] {
	return all(ctx, q.Page, func(ctx context.Context, page int) (*Page[WorkflowRun], error) {
		q.Page = page
		return c.QueryWorkflowRuns(ctx, team, q)
	})
}

// GetWorkflowRun reads a run with its task runs (unless WithoutTasks). getWorkflowRun.
func (c *Client) GetWorkflowRun(ctx context.Context, team, id string, opts ...ReadOption) (*WorkflowRun, error) {
	var out WorkflowRun
	_, err := c.call(ctx, http.MethodGet, p("team", team, "workflowrun", id), readQuery(opts).values(), nil, &out)
	return ret(&out, err)
}

// CancelWorkflowRun cancels a run that has not completed: its running tasks are stopped,
// pending ones skipped, open actions cancelled, child runs cancelled. cancelWorkflowRun.
func (c *Client) CancelWorkflowRun(ctx context.Context, team, id string) (*WorkflowRun, error) {
	return c.runMove(ctx, http.MethodDelete, team, id, "cancel", nil)
}

// FinalizeWorkflowRun finalizes a completed run, releasing its workspaces.
// finalizeWorkflowRun.
func (c *Client) FinalizeWorkflowRun(ctx context.Context, team, id string) (*WorkflowRun, error) {
	return c.runMove(ctx, http.MethodPut, team, id, "finalize", nil)
}

// RetryWorkflowRun runs an ended run that did not succeed again, as a new run (req may
// be nil). retryWorkflowRun.
func (c *Client) RetryWorkflowRun(ctx context.Context, team, id string, req *WorkflowRunRequest) (*WorkflowRun, error) {
	if req == nil {
		req = &WorkflowRunRequest{}
	}
	return c.runMove(ctx, http.MethodPut, team, id, "retry", req)
}

// StartWorkflowRun starts a queued run now, if a concurrency slot is free (else 429 with
// RetryAfter), req merged into it first (may be nil). startWorkflowRun.
func (c *Client) StartWorkflowRun(ctx context.Context, team, id string, req *WorkflowRunRequest) (*WorkflowRun, error) {
	if req == nil {
		req = &WorkflowRunRequest{}
	}
	return c.runMove(ctx, http.MethodPut, team, id, "start", req)
}

func (c *Client) runMove(ctx context.Context, method, team, id, move string, body any) (*WorkflowRun, error) {
	var out WorkflowRun
	_, err := c.call(ctx, method, p("team", team, "workflowrun", id, move), nil, body, &out)
	return ret(&out, err)
}

package client

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// ActionQuery filters a search of a team's actions; the zero value lists them all,
// newest first.
type ActionQuery struct {
	Types     []string // approval, manual
	Statuses  []string // submitted, approved, rejected, cancelled
	Workflows []string
	From, To  time.Time
	Order     string // ASC or DESC (default)
	Sort      string // creationDate (default), name, status
	Page      int
	Limit     int // 1 to 1000 (default 10)
}

// ActionSummaryQuery filters GetActionSummary.
type ActionSummaryQuery struct {
	Workflows []string
	From, To  time.Time
}

// DecideActions records decisions on team's actions, all or none: one closed, unknown
// or forbidden item fails the whole request. Only users decide (user tokens and
// sessions). decideActions.
func (c *Client) DecideActions(ctx context.Context, team string, decisions []ActionRequest) error {
	_, err := c.call(ctx, http.MethodPut, p("team", team, "action"), nil, decisions, nil)
	return err
}

// Approve approves an approval action (or completes a manual one without form values),
// with an optional comment.
func (c *Client) Approve(ctx context.Context, team, actionID, comments string) error {
	return c.DecideActions(ctx, team, []ActionRequest{{ID: actionID, Approved: true, Comments: comments}})
}

// Reject rejects an action: an approval's task fails at once.
func (c *Client) Reject(ctx context.Context, team, actionID, comments string) error {
	return c.DecideActions(ctx, team, []ActionRequest{{ID: actionID, Approved: false, Comments: comments}})
}

// CompleteManualAction completes a manual action with its form's values, which become the
// task's results.
func (c *Client) CompleteManualAction(ctx context.Context, team, actionID string, values map[string]any) error {
	return c.DecideActions(ctx, team, []ActionRequest{{ID: actionID, Approved: true, Params: values}})
}

// QueryActions reads one page of team's actions. queryActions.
func (c *Client) QueryActions(ctx context.Context, team string, q ActionQuery) (*Page[Action], error) {
	v := newQuery().list("types", q.Types).list("statuses", q.Statuses).list("workflows", q.Workflows).
		time("fromDate", q.From).time("toDate", q.To).str("order", q.Order).str("sort", q.Sort).page(q.Page, q.Limit)
	var out Page[Action]
	_, err := c.call(ctx, http.MethodGet, p("team", team, "action", "query"), v.values(), nil, &out)
	return ret(&out, err)
}

// Actions yields every action of team matching q.
func (c *Client) Actions(ctx context.Context, team string, q ActionQuery) iter.Seq2[Action, error] {
	return all(ctx, q.Page, func(ctx context.Context, page int) (*Page[Action], error) {
		q.Page = page
		return c.QueryActions(ctx, team, q)
	})
}

// ActionsOfRun answers the actions of run (its approvals and manual steps), of any
// status. The API filters actions by workflow, not by run, so this reads the workflow's
// actions and keeps the run's.
func (c *Client) ActionsOfRun(ctx context.Context, team string, run *WorkflowRun) ([]Action, error) {
	var out []Action
	for a, err := range c.Actions(ctx, team, ActionQuery{Workflows: []string{run.WorkflowRef}, Limit: 1000}) {
		if err != nil {
			return nil, err
		}
		if a.WorkflowRunRef == run.ID {
			out = append(out, a)
		}
	}
	return out, nil
}

// GetActionSummary counts team's pending actions and the share of approvals decided.
// getActionSummary.
func (c *Client) GetActionSummary(ctx context.Context, team string, q ActionSummaryQuery) (*ActionSummary, error) {
	v := newQuery().list("workflows", q.Workflows).time("fromDate", q.From).time("toDate", q.To)
	var out ActionSummary
	_, err := c.call(ctx, http.MethodGet, p("team", team, "action", "summary"), v.values(), nil, &out)
	return ret(&out, err)
}

// GetAction reads an action. getAction.
func (c *Client) GetAction(ctx context.Context, team, id string) (*Action, error) {
	var out Action
	_, err := c.call(ctx, http.MethodGet, p("team", team, "action", id), nil, nil, &out)
	return ret(&out, err)
}

// InsightsQuery filters GetInsights; the window defaults to the last 30 days.
type InsightsQuery struct {
	From, To  time.Time
	Workflows []string
	Statuses  []string
}

// GetInsights aggregates team's runs in a window. getInsights.
func (c *Client) GetInsights(ctx context.Context, team string, q InsightsQuery) (*WorkflowRunInsight, error) {
	v := newQuery().time("fromDate", q.From).time("toDate", q.To).list("workflows", q.Workflows).list("statuses", q.Statuses)
	var out WorkflowRunInsight
	_, err := c.call(ctx, http.MethodGet, p("team", team, "insights"), v.values(), nil, &out)
	return ret(&out, err)
}

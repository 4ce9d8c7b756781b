package client

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// ScheduleQuery filters a search of a team's schedules; the zero value lists them all,
// oldest first.
type ScheduleQuery struct {
	Statuses  []string // active, inactive, completed, archived
	Types     []string // cron, advancedCron, runOnce
	Workflows []string
	Page      int
	Limit     int // 1 to 1000 (default 10)
}

// BackfillResult is what BackfillSchedule did: the fire times the window held (each one
// run now) and the runs this call created.
type BackfillResult struct {
	Runs    int `json:"runs"`
	Created int `json:"created"`
}

// CreateSchedule creates a schedule of a team's workflow. createSchedule.
func (c *Client) CreateSchedule(ctx context.Context, team string, s *WorkflowSchedule) (*WorkflowSchedule, error) {
	var out WorkflowSchedule
	_, err := c.call(ctx, http.MethodPost, p("team", team, "schedule"), nil, s, &out)
	return ret(&out, err)
}

// ApplySchedule replaces schedule s.ID, or creates s when it has no ID. applySchedule.
func (c *Client) ApplySchedule(ctx context.Context, team string, s *WorkflowSchedule) (*WorkflowSchedule, error) {
	var out WorkflowSchedule
	_, err := c.call(ctx, http.MethodPut, p("team", team, "schedule"), nil, s, &out)
	return ret(&out, err)
}

// GetScheduleCalendars lists the fire times of schedules (ids) in [from, to], at most 366
// days. getScheduleCalendars.
func (c *Client) GetScheduleCalendars(ctx context.Context, team string, ids []string, from, to time.Time) ([]WorkflowScheduleCalendar, error) {
	v := newQuery().list("schedules", ids).time("fromDate", from).time("toDate", to)
	var out []WorkflowScheduleCalendar
	_, err := c.call(ctx, http.MethodGet, p("team", team, "schedule", "calendars"), v.values(), nil, &out)
	return out, err
}

// QuerySchedules reads one page of team's schedules. querySchedules.
func (c *Client) QuerySchedules(ctx context.Context, team string, q ScheduleQuery) (*Page[WorkflowSchedule], error) {
	v := newQuery().list("statuses", q.Statuses).list("types", q.Types).list("workflows", q.Workflows).page(q.Page, q.Limit)
	var out Page[WorkflowSchedule]
	_, err := c.call(ctx, http.MethodGet, p("team", team, "schedule", "query"), v.values(), nil, &out)
	return ret(&out, err)
}

// Schedules yields every schedule of team matching q.
func (c *Client) Schedules(ctx context.Context, team string, q ScheduleQuery) iter.Seq2[WorkflowSchedule, error] {
	return all(ctx, q.Page, func(ctx context.Context, page int) (*Page[WorkflowSchedule], error) {
		q.Page = page
		return c.QuerySchedules(ctx, team, q)
	})
}

// ValidateCron checks a cron expression in an IANA timezone and answers its next fire
// times; an invalid expression is Valid false, not an error. validateCron.
func (c *Client) ValidateCron(ctx context.Context, team, cron, timezone string) (*CronValidationResponse, error) {
	v := newQuery().str("cron", cron).str("timezone", timezone)
	var out CronValidationResponse
	_, err := c.call(ctx, http.MethodGet, p("team", team, "schedule", "validate-cron"), v.values(), nil, &out)
	return ret(&out, err)
}

// GetSchedule reads a schedule. getSchedule.
func (c *Client) GetSchedule(ctx context.Context, team, id string) (*WorkflowSchedule, error) {
	var out WorkflowSchedule
	_, err := c.call(ctx, http.MethodGet, p("team", team, "schedule", id), nil, nil, &out)
	return ret(&out, err)
}

// DeleteSchedule deletes a schedule. deleteSchedule.
func (c *Client) DeleteSchedule(ctx context.Context, team, id string) error {
	_, err := c.call(ctx, http.MethodDelete, p("team", team, "schedule", id), nil, nil, nil)
	return err
}

// BackfillSchedule makes the runs of the schedule's fire times in [from, to], a past
// window of at most 366 days and 1,000 fires; fires that made their run already make
// none again. backfillSchedule.
func (c *Client) BackfillSchedule(ctx context.Context, team, id string, from, to time.Time) (*BackfillResult, error) {
	body := map[string]int64{"fromDate": from.UnixMilli(), "toDate": to.UnixMilli()}
	var out BackfillResult
	_, err := c.call(ctx, http.MethodPost, p("team", team, "schedule", id, "backfill"), nil, body, &out)
	return ret(&out, err)
}

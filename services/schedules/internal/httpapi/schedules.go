package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/param"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/schedules/internal/app"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// defaultLimit is the page size of a schedule search that names none (API.md §1).
const defaultLimit = 10

// scheduleBody is the contract's WorkflowSchedule as clients send it. Params come as the
// contract's list of {name, value} or as an object; dates as RFC 3339 text or epoch
// milliseconds; read-only members are ignored.
type scheduleBody struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	WorkflowRef   string            `json:"workflowRef"`
	Type          string            `json:"type"`
	Status        string            `json:"status"`
	CronSchedule  string            `json:"cronSchedule"`
	DateSchedule  json.RawMessage   `json:"dateSchedule"`
	Timezone      string            `json:"timezone"`
	Params        json.RawMessage   `json:"params"`
	Labels        map[string]string `json:"labels"`
	OverlapPolicy string            `json:"overlapPolicy"`
	MisfirePolicy string            `json:"misfirePolicy"`
	CatchupWindow string            `json:"catchupWindow"`
}

func (b scheduleBody) schedule() (domain.Schedule, error) {
	params, err := param.DecodeValues(b.Params)
	if err != nil {
		return domain.Schedule{}, apperr.Invalid(apperr.ScheduleInvalidReq, err.Error(), apperr.FieldError{Field: "params", Message: err.Error()})
	}
	date, err := instant(b.DateSchedule)
	if err != nil {
		return domain.Schedule{}, apperr.Invalid(apperr.ScheduleInvalidRunOnce, "dateSchedule must be an RFC 3339 date or epoch milliseconds.",
			apperr.FieldError{Field: "dateSchedule", Message: "must be an RFC 3339 date or epoch milliseconds"})
	}
	var window time.Duration
	if b.CatchupWindow != "" {
		if window, err = time.ParseDuration(b.CatchupWindow); err != nil {
			return domain.Schedule{}, apperr.Invalid(apperr.ScheduleInvalidReq, "catchupWindow must be a duration such as 6h.",
				apperr.FieldError{Field: "catchupWindow", Message: "must be a duration such as 6h"})
		}
	}
	return domain.Schedule{ID: b.ID, Name: b.Name, Description: b.Description, Workflow: b.WorkflowRef,
		Type: domain.Type(b.Type), Status: domain.Status(b.Status), Cron: b.CronSchedule, Date: date, Timezone: b.Timezone,
		Params: params, Labels: b.Labels, Overlap: domain.OverlapPolicy(b.OverlapPolicy), Misfire: domain.MisfirePolicy(b.MisfirePolicy),
		CatchupWindow: window}, nil
}

// instant reads a date sent as RFC 3339 text or as epoch milliseconds; absent is zero.
func instant(raw json.RawMessage) (time.Time, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return time.Time{}, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return time.Time{}, err
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		return t.UTC(), err
	}
	ms, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || ms < 0 || ms > maxMillis {
		return time.Time{}, strconv.ErrRange
	}
	return time.UnixMilli(ms).UTC(), nil
}

// maxMillis is the year 9999 in epoch milliseconds: later dates are no one's schedule.
const maxMillis = 253402300799999

// scheduleView is the contract's WorkflowSchedule as answered: password params masked.
type scheduleView struct {
	ID               string             `json:"id"`
	Name             string             `json:"name"`
	Description      string             `json:"description,omitempty"`
	WorkflowRef      string             `json:"workflowRef"`
	Type             string             `json:"type"`
	Status           string             `json:"status"`
	TriggerDisabled  bool               `json:"triggerDisabled"`
	CronSchedule     string             `json:"cronSchedule,omitempty"`
	DateSchedule     string             `json:"dateSchedule,omitempty"`
	Timezone         string             `json:"timezone"`
	Params           []events.NameValue `json:"params"`
	Labels           map[string]string  `json:"labels"`
	OverlapPolicy    string             `json:"overlapPolicy"`
	MisfirePolicy    string             `json:"misfirePolicy"`
	CatchupWindow    string             `json:"catchupWindow,omitempty"`
	NextScheduleDate string             `json:"nextScheduleDate,omitempty"`
	LastScheduleDate string             `json:"lastScheduleDate,omitempty"`
	CreationDate     string             `json:"creationDate"`
}

func viewOf(s *domain.Schedule) scheduleView {
	v := scheduleView{ID: s.ID, Name: s.Name, Description: s.Description, WorkflowRef: s.Workflow, Type: string(s.Type),
		Status: string(s.Status), TriggerDisabled: s.TriggerDisabled, CronSchedule: s.Cron, DateSchedule: date(s.Date),
		Timezone: s.Timezone, Params: []events.NameValue{}, Labels: s.Labels, OverlapPolicy: string(s.Overlap),
		MisfirePolicy: string(s.Misfire), NextScheduleDate: date(s.Next), LastScheduleDate: date(s.Last),
		CreationDate: date(s.Created)}
	if s.Labels == nil {
		v.Labels = map[string]string{}
	}
	if s.CatchupWindow > 0 {
		v.CatchupWindow = s.CatchupWindow.String()
	}
	if !s.Fires() || s.Type == domain.TypeRunOnce && s.Status == domain.StatusCompleted {
		// Paused schedules keep their next date; others have none.
		if s.Status != domain.StatusInactive && !s.TriggerDisabled {
			v.NextScheduleDate = ""
		}
	}
	for name, value := range s.Params {
		if slices.Contains(s.Secret, name) {
			value = secrets.Mask
		}
		v.Params = append(v.Params, events.NameValue{Name: name, Value: value})
	}
	slices.SortFunc(v.Params, func(a, b events.NameValue) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return v
}

func date(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(events.TimeFormat)
}

// decodeSchedule reads the request's WorkflowSchedule.
func decodeSchedule(c *fiber.Ctx) (domain.Schedule, error) {
	var b scheduleBody
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return domain.Schedule{}, err
	}
	return b.schedule()
}

func (h *handlers) create(c *fiber.Ctx) error {
	body, err := decodeSchedule(c)
	if err != nil {
		return err
	}
	body.ID = "" // a create makes a new schedule whatever the body says
	s, err := h.schedules.Create(c.UserContext(), c.Params("team"), body)
	if err != nil {
		return err
	}
	return httpx.Created(c, location(s), viewOf(s))
}

func (h *handlers) apply(c *fiber.Ctx) error {
	body, err := decodeSchedule(c)
	if err != nil {
		return err
	}
	s, created, err := h.schedules.Apply(c.UserContext(), c.Params("team"), body)
	if err != nil {
		return err
	}
	if created {
		return httpx.Created(c, location(s), viewOf(s))
	}
	return c.JSON(viewOf(s))
}

func location(s *domain.Schedule) string { return "/api/v2/team/" + s.Team + "/schedule/" + s.ID }

func (h *handlers) get(c *fiber.Ctx) error {
	s, err := h.schedules.Get(c.UserContext(), c.Params("team"), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(viewOf(s))
}

func (h *handlers) archive(c *fiber.Ctx) error {
	if err := h.schedules.Archive(c.UserContext(), c.Params("team"), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h *handlers) query(c *fiber.Ctx) error {
	r, err := httpx.Paging(c, defaultLimit)
	if err != nil {
		return err
	}
	f := app.Filter{Team: c.Params("team"), Workflows: httpx.List(c, "workflows")}
	if f.Statuses, err = oneOf(c, "statuses", domain.Statuses); err != nil {
		return err
	}
	if f.Types, err = oneOf(c, "types", domain.Types); err != nil {
		return err
	}
	p, err := h.schedules.Query(c.UserContext(), f, r)
	if err != nil {
		return err
	}
	return c.JSON(page.Map(p, viewOf))
}

// calendarView is the contract's WorkflowScheduleCalendar.
type calendarView struct {
	ScheduleID string   `json:"scheduleId"`
	Dates      []string `json:"dates"`
}

func (h *handlers) calendars(c *fiber.Ctx) error {
	from, to, err := window(c)
	if err != nil {
		return err
	}
	cals, err := h.schedules.Calendars(c.UserContext(), c.Params("team"), httpx.List(c, "schedules"), from, to)
	if err != nil {
		return err
	}
	out := make([]calendarView, 0, len(cals))
	for _, cal := range cals {
		v := calendarView{ScheduleID: cal.Schedule, Dates: make([]string, 0, len(cal.Dates))}
		for _, d := range cal.Dates {
			v.Dates = append(v.Dates, date(d))
		}
		out = append(out, v)
	}
	return c.JSON(out)
}

// window reads the required fromDate and toDate, epoch milliseconds.
func window(c *fiber.Ctx) (from, to time.Time, err error) {
	f, err := httpx.EpochMillis(c, "fromDate")
	if err != nil {
		return from, to, err
	}
	t, err := httpx.EpochMillis(c, "toDate")
	if err != nil {
		return from, to, err
	}
	if f == nil || t == nil {
		return from, to, apperr.New(apperr.QueryInvalidFilters, "fromDate and toDate (epoch milliseconds) are required.")
	}
	return *f, *t, nil
}

// backfillBody is the body of a backfill: its window, as RFC 3339 text or epoch
// milliseconds.
type backfillBody struct {
	FromDate json.RawMessage `json:"fromDate"`
	ToDate   json.RawMessage `json:"toDate"`
}

// backfillView is what a backfill answers: how many fire times its window held (each now
// one run), and how many runs it created.
type backfillView struct {
	Runs    int `json:"runs"`
	Created int `json:"created"`
}

func (h *handlers) backfill(c *fiber.Ctx) error {
	var b backfillBody
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	from, ferr := instant(b.FromDate)
	to, terr := instant(b.ToDate)
	if ferr != nil || terr != nil || from.IsZero() || to.IsZero() {
		return apperr.Invalid(apperr.ScheduleInvalidReq, "fromDate and toDate are required: RFC 3339 dates or epoch milliseconds.",
			apperr.FieldError{Field: "fromDate", Message: "is required"}, apperr.FieldError{Field: "toDate", Message: "is required"})
	}
	n, err := h.schedules.Backfill(c.UserContext(), c.Params("team"), c.Params("id"), from, to)
	if err != nil {
		return err
	}
	return c.JSON(backfillView{Runs: n.Runs, Created: n.Created})
}

// oneOf reads the list query parameter name, each value one of allowed.
func oneOf[T ~string](c *fiber.Ctx, name string, allowed []T) ([]T, error) {
	var out []T
	for _, v := range httpx.List(c, name) {
		if !slices.Contains(allowed, T(v)) {
			return nil, apperr.Invalid(apperr.QueryInvalidFilters, fmt.Sprintf("%s: unknown value %q.", name, v),
				apperr.FieldError{Field: name, Message: fmt.Sprintf("unknown value %q", v)})
		}
		out = append(out, T(v))
	}
	return out, nil
}

// Package httpapi is the runs service's HTTP surface: runs, task-run logs, and the
// endpoints runners call.
package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/workflowid"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

type handlers struct {
	app *app.App
	// poll is how often a followed log looks for more.
	poll time.Duration
}

// Routes registers the public endpoints on r (/api/v2, principal verified):
//
//	POST   /team/{team}/workflow/{name}/submit
//	GET    /team/{team}/workflowrun/query | /count | /{id}
//	PUT    /team/{team}/workflowrun/{id}/start | /finalize | /retry
//	DELETE /team/{team}/workflowrun/{id}/cancel
//	GET    /taskrun/{id}/log
//	GET    /team/{team}/insights
//	PUT    /team/{team}/action
//	GET    /team/{team}/action/query | /summary | /{id}
//	POST   /callback, GET /callback
//	POST   /team/{team}/queue/{queue}/claim | /attempt/{id}/heartbeat | /log | /end (workers.go)
func Routes(r fiber.Router, a *app.App) {
	h := &handlers{app: a, poll: 250 * time.Millisecond}
	r.Post("/team/:team/workflow/:name/submit", h.submit)
	r.Get("/team/:team/workflowrun/query", h.query)
	r.Get("/team/:team/workflowrun/count", h.count)
	r.Get("/team/:team/workflowrun/:id", h.get)
	r.Put("/team/:team/workflowrun/:id/start", h.start)
	r.Delete("/team/:team/workflowrun/:id/cancel", h.cancel)
	r.Put("/team/:team/workflowrun/:id/finalize", h.finalize)
	r.Put("/team/:team/workflowrun/:id/retry", h.retry)
	r.Get("/taskrun/:id/log", h.log)
	r.Get("/team/:team/insights", h.insights)
	r.Put("/team/:team/action", h.decide)
	r.Get("/team/:team/action/query", h.queryActions)
	r.Get("/team/:team/action/summary", h.actionSummary)
	r.Get("/team/:team/action/:id", h.action)
	r.Post("/callback", h.callback)
	r.Get("/callback", h.callback)
	workerRoutes(r, h)
}

// InternalRoutes registers the endpoints Baton's own services call (libs/runsapi), on r
// (runsapi.Prefix, Baton's services only): runners claim and beat for attempts, workflows
// and identity ask about a workflow's or a team's runs before deleting it, identity asks
// what a team uses of its run quotas.
func InternalRoutes(r fiber.Router, a *app.App) {
	h := &handlers{app: a}
	r.Post(runsapi.ClaimRoute, h.claim)
	r.Post(runsapi.HeartbeatRoute, h.heartbeat)
	r.Get(runsapi.ActiveRunsRoute, h.activeRuns)
	r.Post(runsapi.CancelActiveRunsRoute, h.cancelActiveRuns)
	r.Get(runsapi.UsageRoute, h.usage)
	r.Post(runsapi.SubmitRunRoute, h.submitRun)
	r.Get(runsapi.RunStateRoute, h.runState)
	r.Post(runsapi.CancelRunRoute, h.cancelRun)
}

// submitRun submits a run for one of Baton's services: a schedule's fire, an event, a
// webhook, a code-host delivery, a chat command. Its trigger must be one those services
// start runs with; the caller is trusted for the initiator it
// names, as it is for the principal it signs.
func (h *handlers) submitRun(c *fiber.Ctx) error {
	var b runsapi.SubmitRun
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	switch b.Trigger {
	case "schedule", "event", "webhook", "codehost", "chat":
	default:
		return apperr.Invalid(apperr.WorkflowRunInvalidReq, "trigger must be schedule, event, webhook, codehost or chat.",
			apperr.FieldError{Field: "trigger", Message: "must be schedule, event, webhook, codehost or chat"})
	}
	v, created, err := h.app.Submit(c.UserContext(), app.Submission{
		Team: c.Params("team"), Workflow: c.Params("name"), Key: b.IdempotencyKey, Start: true, Trigger: b.Trigger,
		Request: domain.SubmitRequest{Params: b.Params, Secret: b.Secret, Labels: b.Labels},
		By:      domain.Initiator{Type: b.InitiatedBy.Type, ID: b.InitiatedBy.ID, Name: b.InitiatedBy.Name, Person: b.InitiatedBy.Person},
	})
	if err != nil {
		return err
	}
	v.Tasks = nil
	return c.JSON(runsapi.SubmittedRun{RunState: runsapi.RunState{ID: v.ID, Status: string(v.Status), Phase: string(v.Phase)}, Created: created, Run: &v})
}

func (h *handlers) runState(c *fiber.Ctx) error {
	status, phase, err := h.app.RunState(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(runsapi.RunState{ID: c.Params("id"), Status: status, Phase: phase})
}

func (h *handlers) cancelRun(c *fiber.Ctx) error {
	var b runsapi.CancelRun
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	status, phase, err := h.app.CancelRun(c.UserContext(), c.Params("id"), b.Reason)
	if err != nil {
		return err
	}
	return c.JSON(runsapi.RunState{ID: c.Params("id"), Status: status, Phase: phase})
}

func (h *handlers) activeRuns(c *fiber.Ctx) error {
	n, err := h.app.ActiveRuns(c.UserContext(), c.Params("team"), c.Query("workflow"))
	if err != nil {
		return err
	}
	return c.JSON(runsapi.ActiveRuns{Active: n})
}

func (h *handlers) cancelActiveRuns(c *fiber.Ctx) error {
	team, workflow := c.Params("team"), c.Query("workflow")
	why := "cancelled: team " + team + " is being deleted"
	if workflow != "" {
		why = "cancelled: workflow " + workflow + " is being deleted"
	}
	n, err := h.app.CancelActiveRuns(c.UserContext(), team, workflow, why)
	if err != nil {
		return err
	}
	return c.JSON(runsapi.CancelledRuns{Cancelled: n})
}

// require checks the caller may do action on the team's runs (of workflow, when known).
func require(c *fiber.Ctx, team, workflow, action string) (auth.Principal, error) {
	return auth.Require(c.UserContext(), auth.Scope{Team: team, Workflow: workflow}, "workflowrun", action)
}

// requireTeamRuns checks the caller may do action on runs of the team, before it knows
// which workflow's: a workflow's token is judged in its own workflow, and inScope and
// filter then keep it to that workflow's runs.
func requireTeamRuns(c *fiber.Ctx, team, action string) (auth.Principal, error) {
	workflow := ""
	if p, ok := auth.FromContext(c.UserContext()); ok && p.Type == auth.TypeWorkflow {
		workflow = p.Workflow
	}
	return require(c, team, workflow, action)
}

// inScope hides the runs of other workflows from a workflow's token.
func inScope(p auth.Principal, v app.RunView) error {
	if p.Workflow != "" && p.Workflow != v.WorkflowRef {
		return apperr.New(apperr.WorkflowRunNotFound, "Workflow run '%s' was not found.", v.ID)
	}
	return nil
}

func initiator(p auth.Principal) domain.Initiator {
	return domain.Initiator{Type: p.Type, ID: p.ID, Name: cmp.Or(p.Name, p.Email, p.ID), Person: p.Person}
}

// submitBody is WorkflowSubmitRequest; `trigger` from API clients is ignored.
type submitBody struct {
	Labels          map[string]string `json:"labels"`
	Annotations     map[string]any    `json:"annotations"`
	Params          json.RawMessage   `json:"params"`
	Workspaces      json.RawMessage   `json:"workspaces"`
	Timeout         *int              `json:"timeout"`
	Retries         *int              `json:"retries"`
	Debug           bool              `json:"debug"`
	WorkflowVersion int               `json:"workflowVersion"`
	IdempotencyKey  string            `json:"idempotencyKey"`
	FromFailure     *bool             `json:"fromFailure"`
}

// request is the body's request; params come as the contract's list of {name, value} or
// as an object of name to value.
func (b submitBody) request() (domain.SubmitRequest, error) {
	params, err := app.DecodeParams(b.Params)
	if err != nil {
		return domain.SubmitRequest{}, err
	}
	return domain.SubmitRequest{Labels: b.Labels, Annotations: b.Annotations, Params: params,
		Workspaces: b.Workspaces, Timeout: b.Timeout, Retries: b.Retries, Debug: b.Debug}, nil
}

// optionalBody reads a body that may be absent, and the run request it makes.
func optionalBody(c *fiber.Ctx) (submitBody, domain.SubmitRequest, error) {
	var b submitBody
	if len(strings.TrimSpace(string(c.Body()))) == 0 {
		return b, domain.SubmitRequest{}, nil
	}
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return b, domain.SubmitRequest{}, err
	}
	req, err := b.request()
	return b, req, err
}

func (h *handlers) submit(c *fiber.Ctx) error {
	team := c.Params("team")
	name := workflowid.Resolve(team, c.Params("name")) // a v4 client sends the workflow's id
	start, err := httpx.Bool(c, "start", false)
	if err != nil {
		return err
	}
	b, req, err := optionalBody(c)
	if err != nil {
		return err
	}
	if b.Timeout != nil && *b.Timeout < 0 {
		return apperr.Invalid(apperr.WorkflowRunInvalidReq, "timeout must not be negative.", apperr.FieldError{Field: "timeout", Message: "must not be negative"})
	}
	if b.WorkflowVersion < 0 {
		return apperr.Invalid(apperr.WorkflowRunInvalidReq, "workflowVersion must be 1 or more.", apperr.FieldError{Field: "workflowVersion", Message: "must be 1 or more"})
	}
	p, err := require(c, team, name, "write")
	if err != nil {
		return err
	}
	idem := cmp.Or(b.IdempotencyKey, c.Get("Idempotency-Key"))
	v, created, err := h.app.Submit(c.UserContext(), app.Submission{
		Team: team, Workflow: name, Version: b.WorkflowVersion, Request: req, Key: idem, Start: start,
		Trigger: "manual", By: initiator(p),
	})
	if err != nil {
		return err
	}
	if !created {
		return c.JSON(v)
	}
	return httpx.Created(c, "/api/v2/team/"+team+"/workflowrun/"+v.ID, v)
}

func (h *handlers) get(c *fiber.Ctx) error {
	team := c.Params("team")
	p, err := requireTeamRuns(c, team, "read")
	if err != nil {
		return err
	}
	withTasks, err := httpx.Bool(c, "withTasks", true)
	if err != nil {
		return err
	}
	v, err := h.app.GetTeamRun(c.UserContext(), team, c.Params("id"), withTasks)
	if err != nil {
		return err
	}
	if err := inScope(p, v); err != nil {
		return err
	}
	return c.JSON(v)
}

// actOn reads the run of the path a caller acts on, once the caller may act in its team
// and sees the run.
func (h *handlers) actOn(c *fiber.Ctx) (p auth.Principal, team, id string, cur app.RunView, err error) {
	team, id = c.Params("team"), c.Params("id")
	if p, err = requireTeamRuns(c, team, "action"); err != nil {
		return p, team, id, cur, err
	}
	if cur, err = h.app.GetTeamRun(c.UserContext(), team, id, false); err != nil {
		return p, team, id, cur, err
	}
	return p, team, id, cur, inScope(p, cur)
}

// runMove checks the caller may act on the run, then calls move.
func (h *handlers) runMove(c *fiber.Ctx, move func(p auth.Principal, team, id string) (app.RunView, error)) error {
	p, team, id, cur, err := h.actOn(c)
	if err != nil {
		return err
	}
	if _, err := require(c, team, cur.WorkflowRef, "action"); err != nil {
		return err
	}
	v, err := move(p, team, id)
	if err != nil {
		return err
	}
	return c.JSON(v)
}

func (h *handlers) start(c *fiber.Ctx) error {
	_, req, err := optionalBody(c)
	if err != nil {
		return err
	}
	return h.runMove(c, func(_ auth.Principal, team, id string) (app.RunView, error) {
		return h.app.Start(c.UserContext(), team, id, req)
	})
}

func (h *handlers) cancel(c *fiber.Ctx) error {
	return h.runMove(c, func(p auth.Principal, team, id string) (app.RunView, error) {
		return h.app.Cancel(c.UserContext(), team, id, initiator(p).Name)
	})
}

func (h *handlers) finalize(c *fiber.Ctx) error {
	return h.runMove(c, func(_ auth.Principal, team, id string) (app.RunView, error) {
		return h.app.Finalize(c.UserContext(), team, id)
	})
}

func (h *handlers) retry(c *fiber.Ctx) error {
	b, req, err := optionalBody(c)
	if err != nil {
		return err
	}
	fromFailure := b.FromFailure == nil || *b.FromFailure
	p, team, id, _, err := h.actOn(c)
	if err != nil {
		return err
	}
	v, err := h.app.Retry(c.UserContext(), team, id, req, fromFailure, initiator(p))
	if err != nil {
		return err
	}
	return httpx.Created(c, "/api/v2/team/"+team+"/workflowrun/"+v.ID, v)
}

// filter reads the query filters shared by query and count.
func filter(c *fiber.Ctx, p auth.Principal, team string) (domain.RunFilter, error) {
	f := domain.RunFilter{Team: team}
	var err error
	if f.Labels, err = httpx.Labels(c); err != nil {
		return f, err
	}
	if f.From, err = httpx.EpochMillis(c, "fromDate"); err != nil {
		return f, err
	}
	if f.To, err = httpx.EpochMillis(c, "toDate"); err != nil {
		return f, err
	}
	// Workflows are named by name, `<team>/<name>` or id (v4 clients).
	f.Workflows = workflowid.ResolveAll(team, httpx.List(c, "workflows"))
	if p.Workflow != "" {
		// A workflow's token sees that workflow's runs only.
		f.None = len(f.Workflows) > 0 && !slices.Contains(f.Workflows, p.Workflow)
		f.Workflows = []string{p.Workflow}
	}
	return f, nil
}

func oneOf[T ~string](c *fiber.Ctx, name string, allowed []T) ([]string, error) {
	vals := httpx.List(c, name)
	for i, v := range vals {
		v = strings.ToLower(v)
		vals[i] = v
		if !slices.Contains(allowed, T(v)) {
			e := apperr.New(apperr.QueryInvalidFilters, "%s: unknown value %q.", name, v)
			e.Fields = []apperr.FieldError{{Field: name, Message: e.Message}}
			return nil, e
		}
	}
	return vals, nil
}

func (h *handlers) query(c *fiber.Ctx) error {
	team := c.Params("team")
	p, err := requireTeamRuns(c, team, "read")
	if err != nil {
		return err
	}
	pr, err := httpx.Paging(c, page.MaxSize)
	if err != nil {
		return err
	}
	if pr.Desc, err = httpx.Direction(c, "order", false); err != nil {
		return err
	}
	f, err := filter(c, p, team)
	if err != nil {
		return err
	}
	if f.Statuses, err = oneOf(c, "statuses", domain.Statuses); err != nil {
		return err
	}
	if f.Phases, err = oneOf(c, "phase", domain.Phases); err != nil {
		return err
	}
	if f.Triggers, err = oneOf(c, "triggers", domain.Triggers); err != nil {
		return err
	}
	f.IDs = httpx.List(c, "workflowruns")
	runs, total, err := h.app.FindRuns(c.UserContext(), f, pr)
	if err != nil {
		return err
	}
	return c.JSON(page.New(runs, pr, total))
}

func (h *handlers) count(c *fiber.Ctx) error {
	team := c.Params("team")
	p, err := requireTeamRuns(c, team, "read")
	if err != nil {
		return err
	}
	f, err := filter(c, p, team)
	if err != nil {
		return err
	}
	counts, err := h.app.CountRuns(c.UserContext(), f)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"status": counts})
}

// log answers a task run's log as text; follow streams it until the task ends.
func (h *handlers) log(c *fiber.Ctx) error {
	id := c.Params("id")
	follow, err := httpx.Bool(c, "follow", false)
	if err != nil {
		return err
	}
	src, err := h.app.TaskLog(c.UserContext(), id)
	if err != nil {
		return err
	}
	p, err := require(c, src.Team, src.Workflow, "read")
	if err != nil {
		return apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", id)
	}
	if p.Workflow != "" && p.Workflow != src.Workflow {
		return apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", id)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	if !follow || src.Ended {
		text, _, err := h.app.ReadLog(c.UserContext(), id, src.Attempts, domain.LogCursor{})
		if err != nil {
			return err
		}
		return c.SendString(text)
	}
	httpx.Stream(c, func(ctx context.Context, w io.Writer) error {
		return h.follow(ctx, w, id, src.Attempts)
	})
	return nil
}

// follow writes task run id's log to w as it is stored, through its attempts (attempts
// so far), until the task ends; it stops with ctx (the client left or the service is
// shutting down) with ctx's error.
func (h *handlers) follow(ctx context.Context, w io.Writer, id string, attempts int) error {
	var after domain.LogCursor
	tick := time.NewTicker(h.poll)
	defer tick.Stop()
	for {
		text, next, err := h.app.ReadLog(ctx, id, attempts, after)
		if err != nil {
			return err
		}
		after = next
		if _, err := io.WriteString(w, text); err != nil {
			return err
		}
		n, ended, err := h.app.TaskProgress(ctx, id)
		if err != nil {
			return err
		}
		if ended {
			// One last read: chunks stored before the end was.
			text, _, err := h.app.ReadLog(ctx, id, n, after)
			if err != nil {
				return err
			}
			_, err = io.WriteString(w, text)
			return err
		}
		attempts = n
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (h *handlers) claim(c *fiber.Ctx) error {
	var b runsapi.AttemptRequest
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	ok, err := h.app.Claim(c.UserContext(), c.Params("id"), b.Attempt, b.Runner)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.New(apperr.WorkflowRunInvalidPhase, "Attempt %d of task run '%s' cannot be claimed.", b.Attempt, c.Params("id"))
	}
	return c.JSON(runsapi.ClaimAnswer{Claimed: true})
}

func (h *handlers) heartbeat(c *fiber.Ctx) error {
	var b runsapi.AttemptRequest
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	cancel, ok, err := h.app.Heartbeat(c.UserContext(), c.Params("id"), b.Attempt, b.Runner)
	if err != nil {
		return err
	}
	if !ok {
		return apperr.New(apperr.WorkflowRunInvalidPhase, "Attempt %d of task run '%s' is not runner %s's.", b.Attempt, c.Params("id"), b.Runner)
	}
	return c.JSON(runsapi.HeartbeatAnswer{Cancel: cancel})
}

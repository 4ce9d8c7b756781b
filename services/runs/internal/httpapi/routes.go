// Package httpapi is the runs service's HTTP surface: runs, task-run logs, and the
// endpoints runners call.
package httpapi

import (
	"cmp"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
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

// Package httpapi is the workflows service's HTTP transport: parse, call the use case,
// render. Bodies are the domain's workflow documents, unknown fields included.
package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/services/workflows/internal/app"
)

type handlers struct {
	workflows *app.Workflows
	templates *app.Templates
}

// Routes registers the service's endpoints on r (/api/v2), which already authenticates
// callers. Fixed segments come before parameters: `/workflow/query` is not a workflow.
func Routes(r fiber.Router, workflows *app.Workflows, templates *app.Templates) {
	h := &handlers{workflows: workflows, templates: templates}
	r.Get("/team/:team/workflow/query", h.queryWorkflows)
	r.Post("/team/:team/workflow", h.createWorkflow)
	r.Put("/team/:team/workflow", h.putWorkflow)
	r.Get("/team/:team/workflow/:name", h.getWorkflow)
	r.Delete("/team/:team/workflow/:name", h.deleteWorkflow)
	r.Post("/team/:team/workflow/:name/duplicate", h.duplicateWorkflow)
	r.Get("/team/:team/workflow/:name/export", h.exportWorkflow)
	r.Get("/team/:team/workflow/:name/changelog", h.workflowChangelog)
	r.Get("/team/:team/workflow/:name/available-parameters", h.availableParameters)
	r.Get("/team/:team/workflow/:name/compose", h.getCanvas)
	r.Put("/team/:team/workflow/:name/compose", h.putCanvas)
	// v4 clients' team-less export (deprecated): the workflow is found among the caller's teams.
	r.Get("/workflow/:name/export", h.exportAnywhere)

	r.Get("/workflowtemplate/query", h.queryTemplates)
	r.Post("/workflowtemplate", h.createTemplate)
	r.Put("/workflowtemplate", h.putTemplate)
	r.Get("/workflowtemplate/:name", h.getTemplate)
	r.Delete("/workflowtemplate/:name", h.deleteTemplate)
}

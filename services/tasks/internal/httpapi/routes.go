// Package httpapi is the tasks service's HTTP transport: parse, call the use case, render.
// Task bodies are JSON or Tekton YAML both ways, chosen by Content-Type and Accept.
package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/tasksapi"
	"github.com/baton-flow/baton/services/tasks/internal/app"
)

// Routes registers the catalogue's endpoints on r (mounted at /api/v2), which already
// authenticates callers. Team tasks live under /team/{team}/task, global ones under /task;
// both have the same operations but delete, which is team-only.
func Routes(r fiber.Router, tasks *app.Tasks) {
	h := &handlers{tasks: tasks}
	r.Post("/team/:team/task", h.create(teamRef))
	r.Get("/team/:team/task/query", h.queryTeam)
	r.Post("/team/:team/task/validate", h.validate(teamRef))
	r.Get("/team/:team/task/:name", h.get(teamRef))
	r.Put("/team/:team/task/:name", h.put(teamRef))
	r.Delete("/team/:team/task/:name", h.delete)
	r.Get("/team/:team/task/:name/changelog", h.changelog(teamRef))

	r.Post("/task", h.create(globalRef))
	r.Get("/task/query", h.queryGlobal)
	r.Post("/task/validate", h.validate(globalRef))
	r.Get("/task/:name", h.get(globalRef))
	r.Put("/task/:name", h.put(globalRef))
	r.Get("/task/:name/changelog", h.changelog(globalRef))
}

// InternalRoutes registers the endpoint Baton's services call, on r (mounted at
// /internal/v1), which must already verify the service credential and admit only Baton's
// own services. libs/tasksapi is its contract:
//
//	GET /internal/v1/tasks/resolve?ref=<name>|<team>/<name>[&version=<n>]
//	  200 tasksapi.Task: the task version as the API's Task (version, status, scope,
//	      team, spec…); the latest version when version is absent
//	  400 REQUEST_INVALID / TASK_INVALID_NAME for a malformed ref, QUERY_INVALID_FILTERS
//	      for a version that is not a positive integer
//	  404 TASK_NOT_FOUND when the task or that version does not exist
//
// The caller judges status (an inactive task answers 200 with status "inactive").
func InternalRoutes(r fiber.Router, tasks *app.Tasks) {
	h := &handlers{tasks: tasks}
	r.Get(tasksapi.ResolveRoute, h.resolve)
}

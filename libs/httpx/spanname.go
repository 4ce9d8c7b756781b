package httpx

import "github.com/gofiber/fiber/v2"

// localSpanRoute is the Locals key of the route SpanRoute names.
const localSpanRoute = "httpx.spanRoute"

// SpanRoute names the request's operation by route, a path template such as
// "/api/v2/team/:team/workflow/:name/submit", instead of the route the app matched: a
// catch-all that serves many operations (the gateway's proxy) names each by its own. The
// request's server span ("POST /api/v2/team/:team/workflow/:name/submit") and the
// http_route label of its metrics take it.
func SpanRoute(c *fiber.Ctx, route string) { c.Locals(localSpanRoute, route) }

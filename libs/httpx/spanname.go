package httpx

import "github.com/gofiber/fiber/v2"

// localSpanRoute is the Locals key of the route SpanRoute names.
const localSpanRoute = "httpx.spanRoute"

// SpanRoute names the request's operation by route, a path template such as
// "/api/v2/team/:team/workflow/:name/submit", instead of the route the app matched: a
// catch-all that serves many operations (the gateway's proxy) names each span by its own
// ("POST /api/v2/team/:team/workflow/:name/submit"). The request metrics keep the matched
// route: per operation, the series would be the services' twice.
func SpanRoute(c *fiber.Ctx, route string) { c.Locals(localSpanRoute, route) }

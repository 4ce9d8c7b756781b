package httpx

import "github.com/gofiber/fiber/v2"

// localSpanRoute is the Locals key of the route SpanRoute names.
const localSpanRoute = "httpx.spanRoute"

// SpanRoute names the request's server span by route, a path template such as
// "/api/v2/team/:team/workflow/:name/submit", instead of the route the app matched: a
// catch-all that serves many operations (the gateway's proxy) names each by its own.
func SpanRoute(c *fiber.Ctx, route string) { c.Locals(localSpanRoute, route) }

// spanName is the name of a request's server span: its method and route, the operation
// it asked for ("POST /api/v2/team/:team/workflow/:name/submit"), never its path, whose ids
// would make every span's name its own.
func spanName(c *fiber.Ctx) string {
	route, _ := c.Locals(localSpanRoute).(string)
	if route == "" {
		route = c.Route().Path
	}
	return c.Method() + " " + route
}

package gateway

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/baton-flow/baton/gateway/internal/routes"
	"github.com/baton-flow/baton/libs/httpx"
)

// traceRoute names the request's server span by the operation it matched, its route's
// pattern written as the services write theirs ("POST /api/v2/team/:team/workflow/:name/submit"),
// and gives it the team, the workflow and the run the request names. Nothing is done for
// a span that is not recorded.
func traceRoute(c *fiber.Ctx, route *routes.Route, params *routes.Params) {
	span := trace.SpanFromContext(c.UserContext())
	if !span.IsRecording() {
		return
	}
	httpx.SpanRoute(c, fiberPattern(route.Pattern))
	attrs := make([]attribute.KeyValue, 0, 3)
	if team := params.Get("team"); team != "" {
		attrs = append(attrs, attribute.String("baton.team", team))
	}
	if name := params.Get("name"); name != "" && strings.Contains(route.Pattern, "/workflow/{name}") {
		attrs = append(attrs, attribute.String("baton.workflow", name))
	}
	if run := params.Get("workflowRunId"); run != "" {
		attrs = append(attrs, attribute.String("baton.run.id", run))
	}
	span.SetAttributes(attrs...)
}

// fiberPattern writes a route pattern's parameters as Fiber does: {team} as :team.
func fiberPattern(pattern string) string {
	var b strings.Builder
	b.Grow(len(pattern))
	for {
		open := strings.IndexByte(pattern, '{')
		end := strings.IndexByte(pattern, '}')
		if open < 0 || end < open {
			b.WriteString(pattern)
			return b.String()
		}
		b.WriteString(pattern[:open])
		b.WriteByte(':')
		b.WriteString(pattern[open+1 : end])
		pattern = pattern[end+1:]
	}
}

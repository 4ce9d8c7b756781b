package httpapi

import (
	"context"
	"io"
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/workflowid"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/feed"
)

// MIMEEventStream is the content type of the watch streams (Server-Sent Events).
const MIMEEventStream = "text/event-stream"

type watches struct {
	app *app.App
	hub *feed.Hub
}

// WatchRoutes registers the watch streams on r (/api/v2, principal verified), before
// Routes, whose /workflowrun/{id} would take /workflowrun/watch:
//
//	GET /team/{team}/workflowrun/watch
//	GET /team/{team}/workflowrun/{id}/watch
func WatchRoutes(r fiber.Router, a *app.App, hub *feed.Hub) {
	x := &watches{app: a, hub: hub}
	r.Get("/team/:team/workflowrun/watch", x.team)
	r.Get("/team/:team/workflowrun/:id/watch", x.run)
}

// RunReader reads a run's state for the hub: as GET /workflowrun/{id} answers it.
func RunReader(a *app.App) feed.Reader {
	return func(ctx context.Context, id string) (feed.State, error) {
		v, err := a.Get(ctx, id, true)
		if err != nil {
			return feed.State{}, err
		}
		return feed.StateOf(v)
	}
}

// SummaryReader reads a run's summary for the hub: as the runs search answers it.
func SummaryReader(a *app.App) feed.SummaryReader {
	return func(ctx context.Context, id string) (feed.Summary, error) {
		v, err := a.Get(ctx, id, false)
		if err != nil {
			return feed.Summary{}, err
		}
		st, err := feed.StateOf(v)
		return feed.Summary{State: st, Run: v.ID, Team: v.Team, Workflow: v.WorkflowRef, Status: v.Status}, err
	}
}

// team streams the summaries of a team's runs as they change, those of the workflows
// and statuses asked for (as the search names them), until the client leaves.
func (x *watches) team(c *fiber.Ctx) error {
	team := c.Params("team")
	p, err := requireTeamRuns(c, team, "read")
	if err != nil {
		return err
	}
	f := feed.TeamFilter{Workflows: workflowid.ResolveAll(team, httpx.List(c, "workflows"))}
	if p.Workflow != "" {
		// A workflow's token sees that workflow's runs only.
		f.None = len(f.Workflows) > 0 && !slices.Contains(f.Workflows, p.Workflow)
		f.Workflows = []string{p.Workflow}
	}
	if f.Statuses, err = oneOf(c, "statuses", domain.Statuses); err != nil {
		return err
	}
	eventStream(c)
	if c.Method() == fiber.MethodHead {
		httpx.Stream(c, nil) // the head alone
		return nil
	}
	w := x.hub.WatchTeam(team, f)
	httpx.Stream(c, func(ctx context.Context, out io.Writer) error {
		defer w.Close()
		return feed.ServeTeam(ctx, out, w, 0)
	})
	return nil
}

// run streams a run's states: as it is now, then each time it changes, until it ends.
// Whoever may read the run may watch it; a run the caller may not see is answered as
// GET answers it, not with a stream.
func (x *watches) run(c *fiber.Ctx) error {
	team, id := c.Params("team"), c.Params("id")
	p, err := requireTeamRuns(c, team, "read")
	if err != nil {
		return err
	}
	// Subscribed before the first read: a change stored after that read is read again.
	w := x.hub.Watch(id)
	first, err := x.first(c, p, team, id)
	if err != nil || c.Method() == fiber.MethodHead {
		w.Close()
		if err != nil {
			return err
		}
	}
	eventStream(c)
	httpx.Stream(c, func(ctx context.Context, out io.Writer) error {
		defer w.Close()
		return feed.Serve(ctx, out, first, w, 0)
	})
	return nil
}

func (x *watches) first(c *fiber.Ctx, p auth.Principal, team, id string) (feed.State, error) {
	v, err := x.app.GetTeamRun(c.UserContext(), team, id, true)
	if err != nil {
		return feed.State{}, err
	}
	if err := inScope(p, v); err != nil {
		return feed.State{}, err
	}
	return feed.StateOf(v)
}

// eventStream sets the head of a Server-Sent Events answer: nothing on the way may
// cache or hold it back.
func eventStream(c *fiber.Ctx) {
	c.Set(fiber.HeaderContentType, MIMEEventStream)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
}

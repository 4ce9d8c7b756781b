package workflowsapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
)

// How long each call may take.
const (
	teamUsageTimeout       = 3 * time.Second
	taskUsageTimeout       = 5 * time.Second
	workflowVersionTimeout = 10 * time.Second
	triggersTimeout        = 5 * time.Second
)

// ErrNoTaskUsage is TaskUsage's error when the workflows service has no task-usage
// endpoint: it answered 404 with reason ROUTE_NOT_FOUND. Such a workflows service predates
// the endpoint and stores no task references yet; the contract is that the endpoint comes
// in the same release that starts storing them, so the caller may count the task unused.
var ErrNoTaskUsage = errors.New("workflowsapi: the workflows service has no task-usage endpoint")

// Client calls the workflows service's internal endpoints, acting as the service self.
type Client struct {
	c    *peer.Client
	self auth.Principal
}

// New returns the client of the workflows service, calling as the service self. Each call
// has its own time limit (see the methods).
func New(resolver registry.Resolver, signer *auth.Signer, self auth.Principal) *Client {
	return &Client{c: peer.New(Service, resolver, signer, 0), self: self}
}

// TeamUsage returns team's usage, within 3 s. A team the workflows service has not heard
// of yet (its team.created event is still on the way) answers 404 and has none; any other
// answer but 200 is an error of reason DEPENDENCY_UNAVAILABLE.
func (c *Client) TeamUsage(ctx context.Context, team string) (TeamUsage, error) {
	var u TeamUsage
	a, err := c.call(ctx, teamUsageTimeout, TeamUsagePath(team), nil, &u)
	switch {
	case err != nil:
		return TeamUsage{}, err
	case a.Status == http.StatusOK:
		return u, nil
	case a.Status == http.StatusNotFound:
		return TeamUsage{}, nil
	default:
		return TeamUsage{}, c.c.Unavailable(fmt.Errorf("workflows answered %d", a.Status))
	}
}

// TaskUsage returns which workflows use the team task ref (`<team>/<task>`), within 5 s.
// It is ErrNoTaskUsage when the workflows service has no such endpoint, and an error of
// reason DEPENDENCY_UNAVAILABLE for any other answer but 200.
func (c *Client) TaskUsage(ctx context.Context, ref string) (TaskUsage, error) {
	var u TaskUsage
	a, err := c.call(ctx, taskUsageTimeout, TaskUsagePath, url.Values{"ref": {ref}}, &u)
	switch {
	case err != nil:
		return TaskUsage{}, err
	case a.Status == http.StatusOK:
		return u, nil
	case a.Status == http.StatusNotFound && a.Reason == apperr.RouteNotFound.Name:
		return TaskUsage{}, ErrNoTaskUsage
	default:
		return TaskUsage{}, c.c.Unavailable(fmt.Errorf("task usage of %s: status %d %s", ref, a.Status, a.Reason))
	}
}

// WorkflowVersion returns version of team's workflow name (the latest when version is 0),
// within 10 s. A client error the workflows service answers (404 TEAM_NOT_FOUND,
// WORKFLOW_NOT_FOUND, WORKFLOW_REVISION_NOT_FOUND) is returned as that error; anything else
// as DEPENDENCY_UNAVAILABLE.
func (c *Client) WorkflowVersion(ctx context.Context, team, name string, version int) (WorkflowVersion, error) {
	var v WorkflowVersion
	if err := c.version(ctx, team, name, version, &v); err != nil {
		return WorkflowVersion{}, err
	}
	return v, nil
}

// RunnableVersion is WorkflowVersion read as a run is made of it (RunnableVersion): the
// same call, the same errors.
func (c *Client) RunnableVersion(ctx context.Context, team, name string, version int) (RunnableVersion, error) {
	var v RunnableVersion
	if err := c.version(ctx, team, name, version, &v); err != nil {
		return RunnableVersion{}, err
	}
	return v, nil
}

// Triggers answers which of team's workflows the trigger kind starts (TriggeredWorkflows),
// or, when workflow is not empty, that workflow's trigger of the kind, within 5 s. A
// client error the workflows service answers (404 TEAM_NOT_FOUND, WORKFLOW_NOT_FOUND) is
// returned as that error; anything else as DEPENDENCY_UNAVAILABLE.
func (c *Client) Triggers(ctx context.Context, team, kind, workflow string) (TriggeredWorkflows, error) {
	ctx, cancel := context.WithTimeout(ctx, triggersTimeout)
	defer cancel()
	q := url.Values{"kind": {kind}}
	if workflow != "" {
		q.Set("workflow", workflow)
	}
	var out TriggeredWorkflows
	if err := c.c.Get(ctx, c.self, TriggersPath(team), q, &out); err != nil {
		return TriggeredWorkflows{}, err
	}
	return out, nil
}

// version reads a version of team's workflow name into out.
func (c *Client) version(ctx context.Context, team, name string, version int, out any) error {
	ctx, cancel := context.WithTimeout(ctx, workflowVersionTimeout)
	defer cancel()
	var q url.Values
	if version > 0 {
		q = url.Values{"version": {strconv.Itoa(version)}}
	}
	return c.c.Get(ctx, c.self, WorkflowVersionPath(team, name), q, out)
}

// call sends one GET within timeout.
func (c *Client) call(ctx context.Context, timeout time.Duration, path string, q url.Values, out any) (peer.Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.c.Call(ctx, c.self, http.MethodGet, path, q, nil, out)
}

package runsapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
)

// How long each call may take.
const (
	// A heartbeat that takes longer is as good as missed.
	attemptTimeout = 5 * time.Second
	// Cancelling a team's runs may take a while.
	activeRunsTimeout = 10 * time.Second
	// A team read waits for the usage.
	usageTimeout = 3 * time.Second
	// A schedule's fire waits for its run; one that takes longer is tried again, under
	// the same key.
	runTimeout = 10 * time.Second
)

// ErrAttemptLost is the error of a claim or heartbeat the runs service answered 409 (the
// attempt is someone else's, or cancelled) or 404 (its task run is gone): the runner must
// leave the attempt alone. A 404 for the route itself is not this: it is a runs service
// without the endpoint.
var ErrAttemptLost = errors.New("runsapi: the attempt is not this runner's")

// Client calls the runs service's internal endpoints, acting as the service self.
type Client struct {
	c    *peer.Client
	self auth.Principal
}

// New returns the client of the runs service, calling as the service self. Each call has
// its own time limit (see the methods).
func New(resolver registry.Resolver, signer *auth.Signer, self auth.Principal) *Client {
	return &Client{c: peer.New(Service, resolver, signer, 0), self: self}
}

// Claim makes attempt req of task run taskRunID the runner's, within 5 s. It is
// ErrAttemptLost when the runs service refuses, and another error when it did not answer,
// failed or lacks the endpoint.
func (c *Client) Claim(ctx context.Context, taskRunID string, req AttemptRequest) (ClaimAnswer, error) {
	var out ClaimAnswer
	err := c.attempt(ctx, "claim", taskRunID, ClaimPath(taskRunID), req, &out)
	return out, err
}

// Heartbeat tells the runs service that the runner still runs attempt req, within 5 s. It
// is ErrAttemptLost when the attempt is no longer the runner's, and another error when the
// runs service did not answer, failed or lacks the endpoint.
func (c *Client) Heartbeat(ctx context.Context, taskRunID string, req AttemptRequest) (HeartbeatAnswer, error) {
	var out HeartbeatAnswer
	err := c.attempt(ctx, "heartbeat", taskRunID, HeartbeatPath(taskRunID), req, &out)
	return out, err
}

func (c *Client) attempt(ctx context.Context, action, taskRunID, path string, req AttemptRequest, out any) error {
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	a, err := c.c.Call(ctx, c.self, http.MethodPost, path, nil, req, out)
	switch {
	case err != nil:
		return fmt.Errorf("%s task run %s: %w", action, taskRunID, err)
	case a.Status == http.StatusOK:
		return nil
	case a.Status == http.StatusConflict, a.Status == http.StatusNotFound && a.Reason != apperr.RouteNotFound.Name:
		return fmt.Errorf("%s task run %s: %w", action, taskRunID, ErrAttemptLost)
	default:
		return c.c.Unavailable(fmt.Errorf("%s task run %s: status %d %s", action, taskRunID, a.Status, a.Reason))
	}
}

// CountActiveRuns counts team's runs that are not completed, of workflow unless it is
// empty, within 10 s. A runs service that does not answer 200 is an error of reason
// DEPENDENCY_UNAVAILABLE: deleting what has runs that are not known could leave them
// running unseen.
func (c *Client) CountActiveRuns(ctx context.Context, team, workflow string) (int, error) {
	var out ActiveRuns
	err := c.activeRuns(ctx, http.MethodGet, ActiveRunsPath(team), team, workflow, &out)
	return out.Active, err
}

// CancelActiveRuns cancels them and says how many it cancelled, within 10 s; errors as
// CountActiveRuns.
func (c *Client) CancelActiveRuns(ctx context.Context, team, workflow string) (int, error) {
	var out CancelledRuns
	err := c.activeRuns(ctx, http.MethodPost, CancelActiveRunsPath(team), team, workflow, &out)
	return out.Cancelled, err
}

func (c *Client) activeRuns(ctx context.Context, method, path, team, workflow string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, activeRunsTimeout)
	defer cancel()
	var q url.Values
	if workflow != "" {
		q = url.Values{"workflow": {workflow}}
	}
	a, err := c.c.Call(ctx, c.self, method, path, q, nil, out)
	if err != nil {
		return err
	}
	if a.Status != http.StatusOK {
		return c.c.Unavailable(fmt.Errorf("runs of %s %s: status %d %s", team, workflow, a.Status, a.Reason))
	}
	return nil
}

// Usage returns team's run usage, within 3 s. A runs service that does not answer 200 is
// an error of reason DEPENDENCY_UNAVAILABLE: a usage of 0 would be a wrong answer, not a
// late one.
func (c *Client) Usage(ctx context.Context, team string) (Usage, error) {
	return c.usage(ctx, team, nil)
}

// Counters returns team's run counters alone (CurrentRuns, CurrentConcurrentRuns and
// MonthlyResetDate; no durations), within 3 s, as Usage does: two lookups rather than a
// pass over the month's runs, for listing many teams.
func (c *Client) Counters(ctx context.Context, team string) (Usage, error) {
	return c.usage(ctx, team, url.Values{"counters": {"true"}})
}

func (c *Client) usage(ctx context.Context, team string, query url.Values) (Usage, error) {
	ctx, cancel := context.WithTimeout(ctx, usageTimeout)
	defer cancel()
	var u Usage
	a, err := c.c.Call(ctx, c.self, http.MethodGet, UsagePath(team), query, nil, &u)
	if err != nil {
		return Usage{}, err
	}
	if a.Status != http.StatusOK {
		return Usage{}, c.c.Unavailable(fmt.Errorf("run usage of %s: status %d %s", team, a.Status, a.Reason))
	}
	return u, nil
}

// SubmitRun submits a run of team's workflow name as req says, within 10 s. A refusal the
// catalogue knows (WORKFLOW_NOT_FOUND, WORKFLOWRUN_TRIGGER_DISABLED, a quota) is returned
// as that error; no answer, or a failure of the runs service, is DEPENDENCY_UNAVAILABLE.
func (c *Client) SubmitRun(ctx context.Context, team, name string, req SubmitRun) (SubmittedRun, error) {
	var out SubmittedRun
	err := c.run(ctx, http.MethodPost, SubmitRunPath(team, name), req, &out)
	return out, err
}

// RunState reads run id's state, within 10 s; errors as SubmitRun (WORKFLOWRUN_NOT_FOUND
// for a run that is not there).
func (c *Client) RunState(ctx context.Context, id string) (RunState, error) {
	var out RunState
	err := c.run(ctx, http.MethodGet, RunStatePath(id), nil, &out)
	return out, err
}

// CancelRun cancels run id for reason, within 10 s, and answers its state. A run already
// completed is answered as it is, not refused.
func (c *Client) CancelRun(ctx context.Context, id, reason string) (RunState, error) {
	var out RunState
	err := c.run(ctx, http.MethodPost, CancelRunPath(id), CancelRun{Reason: reason}, &out)
	return out, err
}

func (c *Client) run(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	a, err := c.c.Call(ctx, c.self, method, path, nil, in, out)
	if err != nil {
		return err
	}
	if a.Status != http.StatusOK {
		return c.c.Refused(a)
	}
	return nil
}

// Package activeruns is the client of the runs service's internal endpoints that the
// services deleting what runs belong to (workflows, identity) ask before they delete:
//
//	GET  /internal/v1/teams/{team}/activeruns[?workflow=<name>]         → 200 {"active": n}
//	POST /internal/v1/teams/{team}/activeruns/cancel[?workflow=<name>]  → 200 {"cancelled": n}
//
// A runs service that does not answer makes the delete wait: deleting what has runs that
// are not known could leave them running unseen.
package activeruns

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
)

// timeout bounds one call; cancelling a team's runs may take a while.
const timeout = 10 * time.Second

// Client asks the runs service, acting as self.
type Client struct {
	c    *peer.Client
	self auth.Principal
}

// New returns the client of service "runs", calling as the service self.
func New(resolver registry.Resolver, signer *auth.Signer, self auth.Principal) *Client {
	return &Client{c: peer.New("runs", resolver, signer, timeout), self: self}
}

// Count counts team's runs that are not completed, of workflow unless it is empty.
func (c *Client) Count(ctx context.Context, team, workflow string) (int, error) {
	var body struct {
		Active int `json:"active"`
	}
	if err := c.call(ctx, http.MethodGet, team, workflow, "", &body); err != nil {
		return 0, err
	}
	return body.Active, nil
}

// Cancel cancels them.
func (c *Client) Cancel(ctx context.Context, team, workflow string) error {
	return c.call(ctx, http.MethodPost, team, workflow, "/cancel", nil)
}

func (c *Client) call(ctx context.Context, method, team, workflow, action string, out any) error {
	var q url.Values
	if workflow != "" {
		q = url.Values{"workflow": {workflow}}
	}
	a, err := c.c.Call(ctx, c.self, method, "/internal/v1/teams/"+url.PathEscape(team)+"/activeruns"+action, q, nil, out)
	if err != nil {
		return err
	}
	if a.Status != http.StatusOK {
		return c.c.Unavailable(fmt.Errorf("runs of %s %s: status %d %s", team, workflow, a.Status, a.Reason))
	}
	return nil
}

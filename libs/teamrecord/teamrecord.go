// Package teamrecord is the client of identity's internal read of a team, for the
// services that learn teams from the team topic and are asked about a team whose
// team.created event has not reached them yet:
//
//	GET /internal/v1/teams/{team} → 200 events.TeamCreated | 404 TEAM_NOT_FOUND
//
// Asking before answering 404 lets a client create a team and at once use it.
package teamrecord

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
)

// timeout bounds one call: a request waits for it.
const timeout = 3 * time.Second

// Client asks identity, acting as self.
type Client struct {
	c    *peer.Client
	self auth.Principal
}

// New returns the client of service "identity", calling as the service self.
func New(resolver registry.Resolver, signer *auth.Signer, self auth.Principal) *Client {
	return &Client{c: peer.New("identity", resolver, signer, timeout), self: self}
}

// Team returns the team called name as identity announces it; an error of reason
// TEAM_NOT_FOUND when identity has no such team, DEPENDENCY_UNAVAILABLE when it did not
// answer.
func (c *Client) Team(ctx context.Context, name string) (events.TeamCreated, error) {
	var t events.TeamCreated
	a, err := c.c.Call(ctx, c.self, http.MethodGet, "/internal/v1/teams/"+url.PathEscape(name), nil, nil, &t)
	switch {
	case err != nil:
		return events.TeamCreated{}, err
	case a.Status == http.StatusOK:
		return t, nil
	case a.Status == http.StatusNotFound:
		return events.TeamCreated{}, apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", name)
	default:
		return events.TeamCreated{}, c.c.Unavailable(fmt.Errorf("team %s: status %d %s", name, a.Status, a.Reason))
	}
}

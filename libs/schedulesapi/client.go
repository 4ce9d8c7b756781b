package schedulesapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
)

// createTimeout bounds a CreateSchedule: one that takes longer is sent again, under the
// same key.
const createTimeout = 10 * time.Second

// Client calls the schedules service's internal endpoints, acting as the service self.
type Client struct {
	c    *peer.Client
	self auth.Principal
}

// New returns the client of the schedules service, calling as the service self.
func New(resolver registry.Resolver, signer *auth.Signer, self auth.Principal) *Client {
	return &Client{c: peer.New(Service, resolver, signer, 0), self: self}
}

// CreateSchedule makes the runOnce schedule of team that req asks for, within 10 s, or
// answers the one made earlier under req.Key. A refusal of the request itself, which the
// catalogue knows (WORKFLOW_NOT_FOUND, SCHEDULE_INVALID_REQ, SCHEDULE_INVALID_RUNONCE), is
// returned as that error, a client error; anything else — no answer, a failure, a
// schedules service without the endpoint or refusing this service's credentials — is
// DEPENDENCY_UNAVAILABLE, for the caller to try again later.
func (c *Client) CreateSchedule(ctx context.Context, team string, req CreateSchedule) (CreatedSchedule, error) {
	ctx, cancel := context.WithTimeout(ctx, createTimeout)
	defer cancel()
	var out CreatedSchedule
	a, err := c.c.Call(ctx, c.self, http.MethodPost, CreateSchedulePath(team), nil, req, &out)
	switch {
	case err != nil:
		return CreatedSchedule{}, err
	case a.Status == http.StatusOK:
		return out, nil
	case a.Status == http.StatusUnauthorized || a.Status == http.StatusForbidden ||
		a.Status == http.StatusNotFound && a.Reason == apperr.RouteNotFound.Name:
		// Not the request's fault: a key that differs, or a service not yet upgraded.
		return CreatedSchedule{}, c.c.Unavailable(fmt.Errorf("create a schedule of %s: status %d %s", team, a.Status, a.Reason))
	default:
		return CreatedSchedule{}, c.c.Refused(a)
	}
}

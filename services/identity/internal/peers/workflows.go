// Package peers calls the other Baton services identity reads from, over HTTP through
// discovery, as the identity service.
package peers

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

// Self is the principal identity acts as towards other services.
var Self = auth.Principal{Type: auth.TypeService, ID: "identity", Name: "identity"}

// Workflows asks the workflows service, which owns the count, how many workflows a team has:
//
//	GET /internal/v1/teams/{team}/usage → {"currentWorkflowCount": n}
type Workflows struct{ c *peer.Client }

// NewWorkflows returns the client of service "workflows".
func NewWorkflows(resolver registry.Resolver, signer *auth.Signer) *Workflows {
	return &Workflows{c: peer.New("workflows", resolver, signer, 3*time.Second)}
}

// WorkflowCount returns the number of workflows of team. A team the workflows service has
// not heard of yet (its team.created event is still on the way) has none.
func (w *Workflows) WorkflowCount(ctx context.Context, team string) (int, error) {
	var body struct {
		CurrentWorkflowCount int `json:"currentWorkflowCount"`
	}
	a, err := w.c.Call(ctx, Self, http.MethodGet, "/internal/v1/teams/"+url.PathEscape(team)+"/usage", nil, nil, &body)
	if err != nil {
		return 0, err
	}
	switch a.Status {
	case http.StatusOK:
		return body.CurrentWorkflowCount, nil
	case http.StatusNotFound:
		return 0, nil
	default:
		return 0, w.c.Unavailable(fmt.Errorf("workflows answered %d", a.Status))
	}
}

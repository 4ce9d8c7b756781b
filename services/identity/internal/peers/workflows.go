// Package peers calls the other Baton services identity reads from, over HTTP through
// discovery, as the identity service.
package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/registry"
)

// self is the principal identity acts as towards other services.
var self = auth.Principal{Type: auth.TypeService, ID: "identity", Name: "identity"}

// Workflows asks the workflows service, which owns the count, how many workflows a team has:
//
//	GET /internal/v1/teams/{team}/usage → {"currentWorkflowCount": n}
type Workflows struct {
	resolver registry.Resolver
	signer   *auth.Signer
	client   *http.Client
}

// NewWorkflows returns the client of service "workflows".
func NewWorkflows(resolver registry.Resolver, signer *auth.Signer) *Workflows {
	return &Workflows{resolver: resolver, signer: signer, client: &http.Client{Timeout: 3 * time.Second}}
}

// WorkflowCount returns the number of workflows of team. A team the workflows service has
// not heard of yet (its team.created event is still on the way) has none.
func (w *Workflows) WorkflowCount(ctx context.Context, team string) (int, error) {
	urls, err := w.resolver.Resolve(ctx, "workflows")
	if err != nil {
		return 0, unavailable(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, urls[0]+"/internal/v1/teams/"+url.PathEscape(team)+"/usage", nil)
	if err != nil {
		return 0, fmt.Errorf("usage request: %w", err)
	}
	if err := w.signer.SetHeaders(self, req.Header.Set); err != nil {
		return 0, err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, unavailable(err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return 0, nil
	default:
		return 0, unavailable(fmt.Errorf("workflows answered %d", resp.StatusCode))
	}
	var body struct {
		CurrentWorkflowCount int `json:"currentWorkflowCount"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, unavailable(fmt.Errorf("decode usage: %w", err))
	}
	return body.CurrentWorkflowCount, nil
}

func unavailable(err error) error {
	return apperr.Wrap(apperr.DependencyUnavailable, err, "The workflows service is unavailable; try again.")
}

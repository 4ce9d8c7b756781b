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

// Runs asks the runs service about a team's runs before the team is deleted:
//
//	GET  /internal/v1/teams/{team}/activeruns         → 200 {"active": n}
//	POST /internal/v1/teams/{team}/activeruns/cancel  → 200 {"cancelled": n}
//
// A runs service that does not answer makes the delete wait: deleting a team whose runs
// are not known could leave them running unseen.
type Runs struct{ c *peer.Client }

// NewRuns returns the client of service "runs".
func NewRuns(resolver registry.Resolver, signer *auth.Signer) *Runs {
	return &Runs{c: peer.New("runs", resolver, signer, 10*time.Second)}
}

// ActiveRuns counts the team's runs that are not completed.
func (r *Runs) ActiveRuns(ctx context.Context, team string) (int, error) {
	var body struct {
		Active int `json:"active"`
	}
	if err := r.call(ctx, http.MethodGet, team, "", &body); err != nil {
		return 0, err
	}
	return body.Active, nil
}

// CancelRuns cancels them.
func (r *Runs) CancelRuns(ctx context.Context, team string) error {
	return r.call(ctx, http.MethodPost, team, "/cancel", nil)
}

func (r *Runs) call(ctx context.Context, method, team, action string, out any) error {
	a, err := r.c.Call(ctx, self, method, "/internal/v1/teams/"+url.PathEscape(team)+"/activeruns"+action, nil, nil, out)
	if err != nil {
		return err
	}
	if a.Status != http.StatusOK {
		return r.c.Unavailable(fmt.Errorf("runs of team %s: status %d %s", team, a.Status, a.Reason))
	}
	return nil
}

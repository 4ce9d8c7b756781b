// Package quotas reads teams' workflow-count limits from identity, which owns quotas, for
// the app's QuotaSource port: the team's own override or the instance default, as
// identity's public read of the team (`GET /api/v2/team/{team}`) shows them. Answers are
// kept for a few seconds, since every create asks.
package quotas

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
)

// timeout bounds one read; a create waits on it.
const timeout = 5 * time.Second

// Limits implements app.QuotaSource with identity.
type Limits struct {
	c    *peer.Client
	self auth.Principal
	ttl  time.Duration
	now  func() time.Time

	mu     sync.Mutex
	limits map[string]entry
}

type entry struct {
	max int
	at  time.Time
}

// New returns the limits read from identity as the service self.
func New(resolver registry.Resolver, signer *auth.Signer, self auth.Principal) *Limits {
	return &Limits{c: peer.New(identityapi.Service, resolver, signer, timeout), self: self, ttl: 5 * time.Second,
		now: time.Now, limits: map[string]entry{}}
}

// MaxWorkflowCount implements app.QuotaSource.
func (q *Limits) MaxWorkflowCount(ctx context.Context, team string) (int, error) {
	q.mu.Lock()
	e, ok := q.limits[team]
	q.mu.Unlock()
	if ok && q.now().Sub(e.at) < q.ttl {
		return e.max, nil
	}
	var body struct {
		Quotas struct {
			MaxWorkflowCount *int `json:"maxWorkflowCount"`
		} `json:"quotas"`
	}
	ans, err := q.c.Call(ctx, q.self, http.MethodGet, "/api/v2/team/"+url.PathEscape(team), nil, nil, &body)
	if err != nil {
		return 0, err
	}
	switch {
	case ans.Status == http.StatusNotFound:
		return 0, apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", team)
	case ans.Status != http.StatusOK:
		return 0, q.c.Unavailable(fmt.Errorf("team %s: status %d %s", team, ans.Status, ans.Reason))
	case body.Quotas.MaxWorkflowCount == nil:
		return 0, q.c.Unavailable(fmt.Errorf("team %s: no maxWorkflowCount in identity's answer", team))
	}
	q.mu.Lock()
	q.limits[team] = entry{max: *body.Quotas.MaxWorkflowCount, at: q.now()}
	q.mu.Unlock()
	return *body.Quotas.MaxWorkflowCount, nil
}

// Package quotas reads teams' workflow-count limits from identity, which owns quotas, for
// the app's QuotaSource port: the team's own override or the instance default, as
// identity's workflow context of the team (libs/identityapi) gives it. Answers are kept for
// a few seconds, since every create asks.
package quotas

import (
	"context"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/registry"
)

// Limits implements app.QuotaSource with identity.
type Limits struct {
	c   *identityapi.Client
	ttl time.Duration
	now func() time.Time

	mu     sync.Mutex
	limits map[string]entry
}

type entry struct {
	max int
	at  time.Time
}

// New returns the limits read from identity as the service self.
func New(resolver registry.Resolver, signer *auth.Signer, self auth.Principal) *Limits {
	return &Limits{c: identityapi.New(resolver, signer, self), ttl: 5 * time.Second, now: time.Now, limits: map[string]entry{}}
}

// MaxWorkflowCount implements app.QuotaSource.
func (q *Limits) MaxWorkflowCount(ctx context.Context, team string) (int, error) {
	q.mu.Lock()
	e, ok := q.limits[team]
	q.mu.Unlock()
	if ok && q.now().Sub(e.at) < q.ttl {
		return e.max, nil
	}
	wc, err := q.c.WorkflowContext(ctx, team)
	if err != nil {
		return 0, err
	}
	q.mu.Lock()
	q.limits[team] = entry{max: wc.MaxWorkflowCount, at: q.now()}
	q.mu.Unlock()
	return wc.MaxWorkflowCount, nil
}

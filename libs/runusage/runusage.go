// Package runusage is the client of the runs service's endpoint that tells what a team uses
// of its run quotas, for identity, which serves a team's quotas but owns none of the run
// counters:
//
//	GET /internal/v1/teams/{team}/usage → 200 Usage
//
// The runs service answers it from the counters it enforces (the month's runs, the held
// concurrency slots) and its runs of the month, so the answer is as current as they are.
package runusage

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

// timeout bounds one call: a team read waits for it.
const timeout = 3 * time.Second

// Usage is a team's use of its run quotas, named as the contract's quota fields.
type Usage struct {
	// CurrentRuns is how many runs the team submitted this month (UTC), as counted against
	// maxWorkflowRunMonthly.
	CurrentRuns int `json:"currentRuns"`
	// CurrentConcurrentRuns is how many of its runs hold a concurrency slot.
	CurrentConcurrentRuns int `json:"currentConcurrentRuns"`
	// CurrentRunTotalDuration and CurrentRunMedianDuration are over this month's runs, in
	// milliseconds.
	CurrentRunTotalDuration  int64 `json:"currentRunTotalDuration"`
	CurrentRunMedianDuration int64 `json:"currentRunMedianDuration"`
	// MonthlyResetDate is when CurrentRuns starts again from 0: the first of next month.
	MonthlyResetDate time.Time `json:"monthlyResetDate"`
}

// MonthStart is the start of the month of t, in UTC: the month CurrentRuns counts.
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// Client asks the runs service, acting as self.
type Client struct {
	c    *peer.Client
	self auth.Principal
}

// New returns the client of service "runs", calling as the service self.
func New(resolver registry.Resolver, signer *auth.Signer, self auth.Principal) *Client {
	return &Client{c: peer.New("runs", resolver, signer, timeout), self: self}
}

// Usage returns team's run usage. A runs service that does not answer is an error of
// reason DEPENDENCY_UNAVAILABLE: a usage of 0 would be a wrong answer, not a late one.
func (c *Client) Usage(ctx context.Context, team string) (Usage, error) {
	var u Usage
	a, err := c.c.Call(ctx, c.self, http.MethodGet, "/internal/v1/teams/"+url.PathEscape(team)+"/usage", nil, nil, &u)
	if err != nil {
		return Usage{}, err
	}
	if a.Status != http.StatusOK {
		return Usage{}, c.c.Unavailable(fmt.Errorf("run usage of %s: status %d %s", team, a.Status, a.Reason))
	}
	return u, nil
}

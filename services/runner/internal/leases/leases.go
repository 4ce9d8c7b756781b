// Package leases holds the runner's attempts with the runs service: it claims each attempt
// it receives and beats for it while it runs, through the runs service's task-run
// endpoints (libs/runsapi), signed as the runner. It implements worker.RunsClient.
//
// A claim or heartbeat the runs service refuses (409: the attempt is someone else's or
// cancelled; 404: its task run is gone) means the attempt is not, or no longer, this
// runner's; anything else that is not an answer — a runs service that is down, failing or
// without the endpoint — is an error the worker retries.
package leases

import (
	"context"
	"errors"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/services/runner/internal/worker"
)

// Self is the principal the runner acts as.
var Self = auth.Principal{Type: auth.TypeService, ID: "runner", Name: "runner"}

// Runs is the runs service's side of the runner's attempts; it implements
// worker.RunsClient.
type Runs struct {
	c      *runsapi.Client
	runner string
}

// NewRuns returns the client of the runs service for the runner instance named runner.
func NewRuns(resolver registry.Resolver, signer *auth.Signer, runner string) *Runs {
	return &Runs{c: runsapi.New(resolver, signer, Self), runner: runner}
}

// Claim implements worker.RunsClient.
func (r *Runs) Claim(ctx context.Context, taskRunID string, attempt int) (bool, error) {
	a, err := r.c.Claim(ctx, taskRunID, runsapi.AttemptRequest{Attempt: attempt, Runner: r.runner})
	switch {
	case errors.Is(err, runsapi.ErrAttemptLost):
		return false, nil
	case err != nil:
		return false, err
	}
	return a.Claimed, nil
}

// Heartbeat implements worker.RunsClient.
func (r *Runs) Heartbeat(ctx context.Context, taskRunID string, attempt int, runner string) (worker.Beat, error) {
	a, err := r.c.Heartbeat(ctx, taskRunID, runsapi.AttemptRequest{Attempt: attempt, Runner: runner})
	switch {
	case errors.Is(err, runsapi.ErrAttemptLost):
		return worker.Lost, nil
	case err != nil:
		return worker.Continue, err
	case a.Cancel:
		return worker.Cancel, nil
	}
	return worker.Continue, nil
}

// Package peers calls the runs service's internal task-run endpoints, over HTTP through
// discovery, signed as the runner:
//
//	POST /internal/v1/taskruns/{id}/claim      {"attempt": n, "runner": id} → 200 {"claimed": bool}
//	POST /internal/v1/taskruns/{id}/heartbeat  {"attempt": n, "runner": id} → 200 {"cancel": bool}
//
// Both answer 409 when the attempt is not (or no longer) the runner's and 404 when the
// task run is gone.
package peers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/services/runner/internal/worker"
)

// Self is the principal the runner acts as.
var Self = auth.Principal{Type: auth.TypeService, ID: "runner", Name: "runner"}

// Service is the discovery name of the runs service.
const Service = "runs"

// timeout bounds one call: a heartbeat that takes longer is as good as missed.
const timeout = 5 * time.Second

// Runs is the runs service's client; it implements worker.RunsClient.
type Runs struct {
	c      *peer.Client
	runner string
}

// NewRuns returns the client of the runs service for the runner instance named runner.
func NewRuns(resolver registry.Resolver, signer *auth.Signer, runner string) *Runs {
	return &Runs{c: peer.New(Service, resolver, signer, timeout), runner: runner}
}

// Claim implements worker.RunsClient.
func (r *Runs) Claim(ctx context.Context, taskRunID string, attempt int) (bool, error) {
	var body struct {
		Claimed bool `json:"claimed"`
	}
	status, err := r.post(ctx, taskRunID, "claim", attempt, r.runner, &body)
	switch {
	case err != nil:
		return false, err
	case status == http.StatusConflict || status == http.StatusNotFound:
		return false, nil
	}
	return body.Claimed, nil
}

// Heartbeat implements worker.RunsClient.
func (r *Runs) Heartbeat(ctx context.Context, taskRunID string, attempt int, runner string) (worker.Beat, error) {
	var body struct {
		Cancel bool `json:"cancel"`
	}
	status, err := r.post(ctx, taskRunID, "heartbeat", attempt, runner, &body)
	switch {
	case err != nil:
		return worker.Continue, err
	case status == http.StatusConflict || status == http.StatusNotFound:
		return worker.Lost, nil
	case body.Cancel:
		return worker.Cancel, nil
	}
	return worker.Continue, nil
}

// post calls /internal/v1/taskruns/{id}/{action} and decodes a 200 answer into out. It
// returns 200, 409 or 404, and an error for anything else: a runs service that is down,
// failing, or does not have the endpoint yet.
func (r *Runs) post(ctx context.Context, taskRunID, action string, attempt int, runner string, out any) (int, error) {
	a, err := r.c.Call(ctx, Self, http.MethodPost, "/internal/v1/taskruns/"+url.PathEscape(taskRunID)+"/"+action, nil,
		map[string]any{"attempt": attempt, "runner": runner}, out)
	if err != nil {
		return 0, fmt.Errorf("%s task run %s: %w", action, taskRunID, err)
	}
	// A 404 for the route itself is a runs service without the endpoint, not a task run
	// that is gone.
	if a.Status == http.StatusOK || a.Status == http.StatusConflict || a.Status == http.StatusNotFound && a.Reason != apperr.RouteNotFound.Name {
		return a.Status, nil
	}
	return 0, fmt.Errorf("%s task run %s: status %d %s", action, taskRunID, a.Status, a.Reason)
}

// Package usage asks the workflows service which workflows use a task, so that a task in
// use is not deleted.
//
// The contract, served by the workflows service to Baton's services only:
//
//	GET /internal/v1/task-usage?ref=<team>/<name>
//	  200 {"workflows": ["build", "deploy"]}  names of the team's workflows whose latest
//	                                          version references the task; [] when none
//
// A workflows service that predates the endpoint answers 404 with reason ROUTE_NOT_FOUND
// (its router has no such route). Such a workflows service stores no task references yet,
// so the task counts as unused and a warning is logged; this holds only as long as the
// workflows service adds the endpoint in the same release that starts storing `taskRef`s,
// which is part of the contract. Any other 404, any other answer, or no instance at all
// fails the delete with 503: a task is never deleted on a guess.
package usage

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
)

// The workflows service's side of the contract.
const (
	// Service is the name the workflows service registers under.
	Service = "workflows"
	// Path is its task-usage endpoint.
	Path = "/internal/v1/task-usage"
)

// Response is the body of a 200.
type Response struct {
	Workflows []string `json:"workflows"`
}

// DefaultTimeout bounds one question, every attempt included.
const DefaultTimeout = 5 * time.Second

// maxAttempts bounds the instances one question tries.
const maxAttempts = 2

// Checker asks the workflows service over HTTP, found through discovery.
type Checker struct {
	resolver registry.Resolver
	signer   *auth.Signer
	client   *http.Client
	log      *slog.Logger
	// self is who the tasks service is when it asks.
	self auth.Principal
}

// NewChecker returns a Checker; logger may be nil.
func NewChecker(resolver registry.Resolver, signer *auth.Signer, logger *slog.Logger) *Checker {
	if logger == nil {
		logger = slog.Default()
	}
	return &Checker{
		resolver: resolver, signer: signer, log: logger,
		client: &http.Client{Timeout: DefaultTimeout},
		self:   auth.Principal{Type: auth.TypeService, ID: "tasks", Name: "tasks"},
	}
}

// WorkflowsUsing implements app.UsageChecker.
func (c *Checker) WorkflowsUsing(ctx context.Context, ref domain.Ref) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	instances, err := c.resolver.Resolve(ctx, Service)
	if err != nil || len(instances) == 0 {
		return nil, unavailable(err)
	}
	var lastErr error
	for i := range min(len(instances), maxAttempts) {
		users, err := c.ask(ctx, instances[i], ref)
		if err == nil {
			return users, nil
		}
		lastErr = err
		c.log.WarnContext(ctx, "workflows could not say whether a task is used",
			slog.String("instance", instances[i]), slog.String("task", ref.String()), slog.String("error", err.Error()))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, unavailable(lastErr)
}

func (c *Checker) ask(ctx context.Context, base string, ref domain.Ref) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+Path+"?ref="+url.QueryEscape(ref.String()), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if err := c.signer.SetHeaders(c.self, req.Header.Set); err != nil {
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		var r Response
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("workflows answered a body that is not a task-usage response: %w", err)
		}
		return r.Workflows, nil
	case http.StatusNotFound:
		var e httpx.ErrorBody
		if json.Unmarshal(raw, &e) == nil && e.Reason == apperr.RouteNotFound.Name {
			c.log.WarnContext(ctx, "the workflows service has no task-usage endpoint yet; treating the task as unused",
				slog.String("task", ref.String()))
			return []string{}, nil
		}
	}
	return nil, fmt.Errorf("workflows answered %d", resp.StatusCode)
}

func unavailable(cause error) error {
	return apperr.Wrap(apperr.DependencyUnavailable, cause,
		"The workflows service could not say whether the task is in use; try again shortly.").WithRetryAfter(time.Second)
}

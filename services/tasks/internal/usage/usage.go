// Package usage asks the workflows service which workflows use a task, so that a task in
// use is not deleted. The question is the workflows service's task-usage endpoint
// (libs/workflowsapi), asked as the tasks service.
//
// A workflows service that predates the endpoint has no task references yet, so the task
// counts as unused and a warning is logged (workflowsapi.ErrNoTaskUsage). Any other
// failure, after a second try, fails the delete with 503: a task is never deleted on a
// guess.
package usage

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
)

// DefaultTimeout bounds one question, every attempt included.
const DefaultTimeout = 5 * time.Second

// maxAttempts bounds the tries of one question; the client takes the workflows service's
// instances in turn, so a second try goes to another one when there is another.
const maxAttempts = 2

// self is who the tasks service is when it asks.
var self = auth.Principal{Type: auth.TypeService, ID: "tasks", Name: "tasks"}

// Checker asks the workflows service; it implements app.UsageChecker.
type Checker struct {
	workflows *workflowsapi.Client
	log       *slog.Logger
}

// NewChecker returns a Checker; logger may be nil.
func NewChecker(resolver registry.Resolver, signer *auth.Signer, logger *slog.Logger) *Checker {
	if logger == nil {
		logger = slog.Default()
	}
	return &Checker{workflows: workflowsapi.New(resolver, signer, self), log: logger}
}

// WorkflowsUsing implements app.UsageChecker.
func (c *Checker) WorkflowsUsing(ctx context.Context, ref domain.Ref) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	var lastErr error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		u, err := c.workflows.TaskUsage(ctx, ref.String())
		switch {
		case err == nil:
			return u.Workflows, nil
		case errors.Is(err, workflowsapi.ErrNoTaskUsage):
			c.log.WarnContext(ctx, "the workflows service has no task-usage endpoint yet; treating the task as unused",
				slog.String("task", ref.String()))
			return []string{}, nil
		}
		lastErr = err
		// No instance at all is not worth a second try.
		if errors.Is(err, registry.ErrNoInstance) || ctx.Err() != nil {
			break
		}
		c.log.WarnContext(ctx, "workflows could not say whether a task is used",
			slog.String("task", ref.String()), slog.Int("attempt", attempt), slog.String("error", err.Error()))
	}
	return nil, unavailable(lastErr)
}

func unavailable(cause error) error {
	return apperr.Wrap(apperr.DependencyUnavailable, cause,
		"The workflows service could not say whether the task is in use; try again shortly.").WithRetryAfter(time.Second)
}

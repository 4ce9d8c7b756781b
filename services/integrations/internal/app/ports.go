// Package app holds the integrations service's use cases: runs started by CloudEvents,
// webhooks, code-host deliveries and chat commands; the code-host and chat installs; and
// the delivery of status events to sinks and chat channels. What it needs of other
// services and of its store it declares here, as interfaces.
package app

import (
	"context"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/workflowsapi"
)

// Runs submits runs to the runs service and answers with them. A submit with an
// idempotency key already used for the workflow answers that run, Created false.
type Runs interface {
	Submit(ctx context.Context, team, workflow string, req runsapi.SubmitRun) (runsapi.SubmittedRun, error)
}

// Workflows answers which of a team's workflows a trigger kind starts, or one workflow's
// trigger of a kind (workflowsapi.TriggeredWorkflows).
type Workflows interface {
	Triggers(ctx context.Context, team, kind, workflow string) (workflowsapi.TriggeredWorkflows, error)
}

// Settings reads the sinks and the apps' credentials, secrets opened. Implementations may
// keep an answer for a few seconds: a changed setting takes effect within that time.
type Settings interface {
	IntegrationSettings(ctx context.Context) (identityapi.IntegrationSettings, error)
}

// People finds the Baton user holding an email, as a principal with the user's roles and
// teams at the time of asking; UNAUTHENTICATED for an inactive or deleted user, and
// USER_NOT_FOUND when nobody holds it. Chat users act as the user they are linked to.
type People interface {
	ByEmail(ctx context.Context, email string) (auth.Principal, error)
}

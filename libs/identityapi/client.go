package identityapi

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/names"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
)

// How long each call may take: a request of the caller's waits for most of them.
const (
	authenticateTimeout = 5 * time.Second
	activationTimeout   = 5 * time.Second
	parametersTimeout   = 5 * time.Second
	teamTimeout         = 3 * time.Second
	runContextTimeout   = 10 * time.Second
	// workflowContextTimeout bounds a workflow context read: a workflow's save waits on it.
	workflowContextTimeout = 5 * time.Second
	// approverGroupsTimeout bounds an approver groups read: a caller's vote waits on it.
	approverGroupsTimeout = 5 * time.Second
	// integrationSettingsTimeout bounds a read of the integrations' settings.
	integrationSettingsTimeout = 3 * time.Second
)

// Client calls identity's internal endpoints, acting as the service self.
type Client struct {
	c    *peer.Client
	self auth.Principal
}

// New returns the client of identity, calling as the service self. Each call has its own
// time limit (see the methods).
func New(resolver registry.Resolver, signer *auth.Signer, self auth.Principal) *Client {
	return &Client{c: peer.New(Service, resolver, signer, 0), self: self}
}

// Authentication is identity's answer about a credential: whom it acts for and, for a
// token that expires, when.
type Authentication struct {
	Principal auth.Principal
	Expires   *time.Time
}

// Authenticate asks whom req's token (or verified sign-in) acts for, within 5 s. A
// credential identity refuses is an error of reason UNAUTHENTICATED; any other answer, or
// none, one of reason DEPENDENCY_UNAVAILABLE.
func (c *Client) Authenticate(ctx context.Context, req AuthenticateRequest) (Authentication, error) {
	var p auth.Principal
	a, err := c.call(ctx, authenticateTimeout, http.MethodPost, AuthenticatePath, req, &p)
	switch {
	case err != nil:
		return Authentication{}, err
	case a.Status == http.StatusUnauthorized:
		return Authentication{}, apperr.New(apperr.Unauthenticated, "%s", cmp.Or(a.Message, "The credential is not valid."))
	case a.Status != http.StatusOK:
		return Authentication{}, c.c.Unavailable(fmt.Errorf("authenticate: status %d %s", a.Status, a.Reason))
	}
	out := Authentication{Principal: p}
	if raw := a.Header.Get(HeaderTokenExpires); raw != "" {
		exp, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			return Authentication{}, c.c.Unavailable(fmt.Errorf("identity answered a malformed %s: %w", HeaderTokenExpires, err))
		}
		out.Expires = &exp
	}
	return out, nil
}

// Activated reports whether the installation is unlocked, within 5 s; an error of reason
// DEPENDENCY_UNAVAILABLE when identity does not say.
func (c *Client) Activated(ctx context.Context) (bool, error) {
	var s ActivationState
	a, err := c.call(ctx, activationTimeout, http.MethodGet, ActivationPath, nil, &s)
	if err != nil {
		return false, err
	}
	if a.Status != http.StatusOK {
		return false, c.c.Unavailable(fmt.Errorf("activation state: status %d %s", a.Status, a.Reason))
	}
	return s.Activated, nil
}

// GlobalParameters lists the global parameters' names, within 5 s; an error of reason
// DEPENDENCY_UNAVAILABLE for any answer but 200.
func (c *Client) GlobalParameters(ctx context.Context) (GlobalParameters, error) {
	var g GlobalParameters
	a, err := c.call(ctx, parametersTimeout, http.MethodGet, ParametersPath, nil, &g)
	if err != nil {
		return GlobalParameters{}, err
	}
	if a.Status != http.StatusOK {
		return GlobalParameters{}, c.c.Unavailable(fmt.Errorf("list global parameters: status %d %s", a.Status, a.Reason))
	}
	return g, nil
}

// Team returns the team called name as identity announces it, within 3 s; an error of
// reason TEAM_NOT_FOUND when identity has no such team, DEPENDENCY_UNAVAILABLE when it did
// not answer.
func (c *Client) Team(ctx context.Context, name string) (Team, error) {
	if name == "" || names.Slug(name) != name {
		// Team names are slugs: anything else names no team, and is not sent on (a huge
		// one would not even fit in identity's request line).
		return Team{}, apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", clip(name, 64))
	}
	var t Team
	a, err := c.call(ctx, teamTimeout, http.MethodGet, TeamPath(name), nil, &t)
	switch {
	case err != nil:
		return Team{}, err
	case a.Status == http.StatusOK:
		return t, nil
	case a.Status == http.StatusNotFound:
		return Team{}, apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", name)
	default:
		return Team{}, c.c.Unavailable(fmt.Errorf("team %s: status %d %s", name, a.Status, a.Reason))
	}
}

// clip shortens s to at most n bytes for a message, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// RunContext returns team's run context, within 10 s. A client error identity answers
// (404 TEAM_NOT_FOUND) is returned as that error; anything else as DEPENDENCY_UNAVAILABLE.
func (c *Client) RunContext(ctx context.Context, team string) (RunContext, error) {
	ctx, cancel := context.WithTimeout(ctx, runContextTimeout)
	defer cancel()
	var rc RunContext
	if err := c.c.Get(ctx, c.self, RunContextPath(team), nil, &rc); err != nil {
		return RunContext{}, err
	}
	return rc, nil
}

// ApproverGroups returns team's approver groups, within 5 s. A client error identity
// answers (404 TEAM_NOT_FOUND) is returned as that error; anything else as
// DEPENDENCY_UNAVAILABLE.
func (c *Client) ApproverGroups(ctx context.Context, team string) (ApproverGroups, error) {
	ctx, cancel := context.WithTimeout(ctx, approverGroupsTimeout)
	defer cancel()
	var g ApproverGroups
	if err := c.c.Get(ctx, c.self, ApproverGroupsPath(team), nil, &g); err != nil {
		return ApproverGroups{}, err
	}
	return g, nil
}

// WorkflowContext returns what the workflows service needs of team, within 5 s. A client
// error identity answers (404 TEAM_NOT_FOUND) is returned as that error; anything else as
// DEPENDENCY_UNAVAILABLE.
func (c *Client) WorkflowContext(ctx context.Context, team string) (WorkflowContext, error) {
	ctx, cancel := context.WithTimeout(ctx, workflowContextTimeout)
	defer cancel()
	var wc WorkflowContext
	if err := c.c.Get(ctx, c.self, WorkflowContextPath(team), nil, &wc); err != nil {
		return WorkflowContext{}, err
	}
	return wc, nil
}

// IntegrationSettings returns the integrations' settings, secrets opened, within 3 s; any
// answer but 200 is an error of reason DEPENDENCY_UNAVAILABLE.
func (c *Client) IntegrationSettings(ctx context.Context) (IntegrationSettings, error) {
	var out IntegrationSettings
	a, err := c.call(ctx, integrationSettingsTimeout, http.MethodGet, IntegrationSettingsPath, nil, &out)
	if err != nil {
		return IntegrationSettings{}, err
	}
	if a.Status != http.StatusOK {
		return IntegrationSettings{}, c.c.Unavailable(fmt.Errorf("integration settings: status %d %s", a.Status, a.Reason))
	}
	return out, nil
}

// call sends one request within timeout.
func (c *Client) call(ctx context.Context, timeout time.Duration, method, path string, in, out any) (peer.Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.c.Call(ctx, c.self, method, path, nil, in, out)
}

// Package identityapi is the identity service's internal contract: the endpoints under
// /internal/v1 that Baton's own services call, their request and answer types, a typed
// client, and golden fixtures of the JSON (testdata). Identity serves these types and its
// callers read them; neither side declares its own copy.
//
//	POST /internal/v1/authenticate {"token"} | {"email", "name"}
//	  200 auth.Principal, X-Baton-Token-Expires when the token expires; 401 UNAUTHENTICATED
//	GET  /internal/v1/activation             → 200 ActivationState (the gateway)
//	GET  /internal/v1/parameters             → 200 GlobalParameters (workflows)
//	GET  /internal/v1/teams/{team}           → 200 Team | 404 TEAM_NOT_FOUND (workflows)
//	GET  /internal/v1/teams/{team}/run-context → 200 RunContext | 404 TEAM_NOT_FOUND (runs)
//	GET  /internal/v1/teams/{team}/workflow-context → 200 WorkflowContext | 404 TEAM_NOT_FOUND (workflows)
//	GET  /internal/v1/teams/{team}/approver-groups → 200 ApproverGroups | 404 TEAM_NOT_FOUND (runs)
//	GET  /internal/v1/integration-settings   → 200 IntegrationSettings, secrets opened (integrations)
//
// Every one answers 403 PERMISSION_DENIED to a caller that is not one of Baton's services.
package identityapi

import (
	"encoding/json"
	"errors"
	"net/url"
	"time"
)

// Service is the name identity registers under in discovery.
const Service = "identity"

// Prefix is where the internal endpoints live; the routes below are relative to it, in the
// form a router registers (":team" is a path parameter).
const Prefix = "/internal/v1"

// Routes, for identity's router.
const (
	AuthenticateRoute = "/authenticate"
	ActivationRoute   = "/activation"
	ParametersRoute   = "/parameters"
	TeamRoute         = "/teams/:team"
	RunContextRoute   = "/teams/:team/run-context"
	// WorkflowContextRoute is what the workflows service needs of a team.
	WorkflowContextRoute = "/teams/:team/workflow-context"
	// ApproverGroupsRoute is who may decide a team's approvals, for the runs service.
	ApproverGroupsRoute = "/teams/:team/approver-groups"
	// IntegrationSettingsRoute is the settings the integrations service works by.
	IntegrationSettingsRoute = "/integration-settings"
)

// Paths, for callers.
const (
	AuthenticatePath = Prefix + AuthenticateRoute
	ActivationPath   = Prefix + ActivationRoute
	ParametersPath   = Prefix + ParametersRoute
	// IntegrationSettingsPath is the path of the integrations' settings.
	IntegrationSettingsPath = Prefix + IntegrationSettingsRoute
)

// IntegrationSettings is the answer of GET /internal/v1/integration-settings: the event
// sinks and the chat and code-host apps' credentials as the settings hold them, secured
// values opened. It carries secrets: it must never reach a response, a log line or an
// event, and identity answers it with Cache-Control no-store.
type IntegrationSettings struct {
	// Sinks are the HTTP(S) URLs every status event is delivered to (events.sinks).
	Sinks    []string         `json:"sinks"`
	Chat     ChatSettings     `json:"chat"`
	CodeHost CodeHostSettings `json:"codehost"`
}

// ChatSettings are the chat-platform app's credentials (the chat setting).
type ChatSettings struct {
	ClientID      string `json:"clientId,omitempty"`
	ClientSecret  string `json:"clientSecret,omitempty"`
	SigningSecret string `json:"signingSecret,omitempty"`
	// BotToken posts messages where no install recorded a token of its own.
	BotToken string `json:"botToken,omitempty"`
}

// CodeHostSettings are the code-host app's credentials (the codehost setting).
type CodeHostSettings struct {
	AppID         string `json:"appId,omitempty"`
	WebhookSecret string `json:"webhookSecret,omitempty"`
	PrivateKey    string `json:"privateKey,omitempty"`
}

// TeamPath is the path of the read of team.
func TeamPath(team string) string { return Prefix + "/teams/" + url.PathEscape(team) }

// RunContextPath is the path of team's run context.
func RunContextPath(team string) string { return TeamPath(team) + "/run-context" }

// ApproverGroupsPath is the path of team's approver groups.
func ApproverGroupsPath(team string) string { return TeamPath(team) + "/approver-groups" }

// HeaderTokenExpires carries, on a successful authentication of a token, when the token
// stops working (RFC 3339): whoever caches the answer must not keep it longer.
const HeaderTokenExpires = "X-Baton-Token-Expires"

// AuthenticateRequest is the body of POST /internal/v1/authenticate: a token's secret, or
// the email (and name) of a sign-in the caller verified, never both. The answer is the
// auth.Principal the credential acts for.
type AuthenticateRequest struct {
	Token string `json:"token,omitempty"`
	Email string `json:"email,omitempty"`
	Name  string `json:"name,omitempty"`
}

// ActivationState is the answer of GET /internal/v1/activation: whether the installation
// is unlocked. An answer without `activated` is not one.
type ActivationState struct {
	Activated bool `json:"activated"`
}

// errNoActivated is the error of an activation answer that does not say.
var errNoActivated = errors.New(`identityapi: the activation state has no "activated" member`)

// UnmarshalJSON reads the state and refuses a body without `activated`: a gateway that
// took a missing answer for "locked" (or "unlocked") would guess.
func (s *ActivationState) UnmarshalJSON(b []byte) error {
	var w struct {
		Activated *bool `json:"activated"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Activated == nil {
		return errNoActivated
	}
	s.Activated = *w.Activated
	return nil
}

// GlobalParameters is the answer of GET /internal/v1/parameters: the names of the global
// parameters, in identity's order, for the workflows service to tell which references
// resolve. Values are not part of it: runs read them with the run context.
type GlobalParameters struct {
	Names []string `json:"names"`
}

// Team is the answer of GET /internal/v1/teams/{team}: the team as its team.created event
// announces it, for a service asked about a team whose event has not reached it yet.
type Team struct {
	// ID is the team record's id.
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	DisplayName  string    `json:"displayName"`
	CreationDate time.Time `json:"creationDate"`
}

// WorkflowContextPath is the path of team's workflow context.
func WorkflowContextPath(team string) string { return TeamPath(team) + "/workflow-context" }

// WorkflowContext is the answer of GET /internal/v1/teams/{team}/workflow-context: what
// the workflows service needs of a team to save and check its workflows. ParamNames are
// the names of the team's parameters, in identity's order (which `$(team.params.<name>)`
// references resolve; values are not part of it); MaxWorkflowCount is the team's limit of
// workflows in force, its own or the installation's default.
type WorkflowContext struct {
	Team             string   `json:"team"`
	ParamNames       []string `json:"paramNames"`
	MaxWorkflowCount int      `json:"maxWorkflowCount"`
}

// RunContext is the answer of GET /internal/v1/teams/{team}/run-context: what a team's
// runs resolve parameters against, and the limits they run under. Parameter values are
// effective values (value, else default) as JSON, password values in the clear; Secrets
// names the password parameters with a value as "global.<name>" / "team.<name>", sorted.
type RunContext struct {
	Team         string         `json:"team"`
	GlobalParams map[string]any `json:"globalParams"`
	TeamParams   map[string]any `json:"teamParams"`
	Secrets      []string       `json:"secrets"`
	Quotas       RunQuotas      `json:"quotas"`
	// TaskDefaultTimeout is in minutes.
	TaskDefaultTimeout  int  `json:"taskDefaultTimeout"`
	PreventSelfApproval bool `json:"preventSelfApproval"`
	// MaxDepth is how deep child runs may nest.
	MaxDepth int `json:"maxDepth"`
	// MaxTreeRuns is how many runs one run may start below it, at every depth.
	MaxTreeRuns int `json:"maxTreeRuns"`
}

// RunQuotas are the team's limits that concern runs: duration in minutes, storage in GiB.
type RunQuotas struct {
	MaxWorkflowRunMonthly  int `json:"maxWorkflowRunMonthly"`
	MaxWorkflowRunDuration int `json:"maxWorkflowRunDuration"`
	MaxConcurrentRuns      int `json:"maxConcurrentRuns"`
	MaxWorkflowRunStorage  int `json:"maxWorkflowRunStorage"`
}

// ApproverGroups is the answer of GET /internal/v1/teams/{team}/approver-groups: the
// team's approver groups as they are now, in the team's order, for the runs service to
// tell who may decide an approval task that names a group. A team without groups answers
// an empty list.
type ApproverGroups struct {
	Team   string          `json:"team"`
	Groups []ApproverGroup `json:"groups"`
}

// ApproverGroup is one named set of a team's members who may decide approvals.
type ApproverGroup struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Approvers are user ids, each a member of the team; empty (never null) for a group
	// without any.
	Approvers []string `json:"approvers"`
}

package httpapi

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/services/identity/internal/app"
)

// HeaderTokenExpires carries, on a successful authentication, when the token stops working
// (RFC 3339): whoever caches the answer must not keep it longer. The gateway's authn package
// reads the same header name.
const HeaderTokenExpires = "X-Baton-Token-Expires"

// InternalRoutes registers the endpoints other Baton processes call, under /internal/v1.
// r must already verify the service credential; RequireService then admits only Baton's
// own services.
//
//	POST /authenticate {"token": "<secret>"}
//	  200 auth.Principal as JSON, X-Baton-Token-Expires when the token expires
//	  401 UNAUTHENTICATED for a secret that is malformed, unknown, revoked or expired
//	POST /authenticate {"email": "<address>", "name": "<display name>"}
//	  a sign-in with a JWT the gateway verified: 200 the session principal of the user
//	  holding the email, or, for an email nobody holds yet, {"type":"session","email",
//	  "name"} without an id (GET /profile registers the user); 401 UNAUTHENTICATED for an
//	  inactive or deleted user
//	GET /teams/{team}/run-context
//	  200 RunContext: what the team's runs resolve parameters against (secrets opened) and
//	  its run limits, for the runs service at each submit; 404 TEAM_NOT_FOUND
func InternalRoutes(r fiber.Router, tokens *app.Tokens, principals *app.Principals, runContexts *app.RunContexts) {
	h := &internalHandlers{tokens: tokens, principals: principals, runContexts: runContexts}
	r.Post("/authenticate", h.authenticate)
	r.Get("/teams/:team/run-context", h.runContext)
}

// RequireService admits requests whose verified principal is a Baton service: internal
// endpoints answer questions (who holds this secret) no user may ask.
func RequireService(c *fiber.Ctx) error {
	p, ok := auth.FromContext(c.UserContext())
	if !ok || p.Type != auth.TypeService {
		return apperr.New(apperr.PermissionDenied, "Only Baton's services may call internal endpoints.")
	}
	return c.Next()
}

type internalHandlers struct {
	tokens      *app.Tokens
	principals  *app.Principals
	runContexts *app.RunContexts
}

// AuthenticateRequest is the body of POST /internal/v1/authenticate: a token's secret, or
// the email (and name) of a verified sign-in.
type AuthenticateRequest struct {
	Token string `json:"token"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

func (h *internalHandlers) authenticate(c *fiber.Ctx) error {
	var req AuthenticateRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		return err
	}
	if req.Email != "" {
		return h.signIn(c, req)
	}
	res, err := h.tokens.Authenticate(c.UserContext(), req.Token)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	if res.Expires != nil {
		c.Set(HeaderTokenExpires, res.Expires.UTC().Format(time.RFC3339Nano))
	}
	return c.JSON(res.Principal)
}

// signIn answers for a sign-in the gateway verified. Asking with a token and an email at
// once is a caller's mistake: which one was meant cannot be guessed.
func (h *internalHandlers) signIn(c *fiber.Ctx, req AuthenticateRequest) error {
	if req.Token != "" {
		return apperr.New(apperr.RequestInvalid, "Authenticate a token or an email, not both.")
	}
	p, err := h.principals.SignIn(c.UserContext(), req.Email, req.Name)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(p)
}

// RunContext is the body of GET /internal/v1/teams/{team}/run-context. Parameter values
// are effective values (value, else default) as JSON, password values in the clear;
// Secrets names the password parameters with a value as "global.<name>" / "team.<name>".
type RunContext struct {
	Team                string         `json:"team"`
	GlobalParams        map[string]any `json:"globalParams"`
	TeamParams          map[string]any `json:"teamParams"`
	Secrets             []string       `json:"secrets"`
	Quotas              RunQuotas      `json:"quotas"`
	TaskDefaultTimeout  int            `json:"taskDefaultTimeout"` // minutes
	PreventSelfApproval bool           `json:"preventSelfApproval"`
	MaxDepth            int            `json:"maxDepth"`    // of child runs
	MaxTreeRuns         int            `json:"maxTreeRuns"` // below one run, at every depth
}

// RunQuotas are the team's limits that concern runs: storage in GiB, duration in minutes.
type RunQuotas struct {
	MaxWorkflowRunMonthly  int `json:"maxWorkflowRunMonthly"`
	MaxWorkflowRunDuration int `json:"maxWorkflowRunDuration"`
	MaxConcurrentRuns      int `json:"maxConcurrentRuns"`
	MaxWorkflowRunStorage  int `json:"maxWorkflowRunStorage"`
}

func (h *internalHandlers) runContext(c *fiber.Ctx) error {
	rc, err := h.runContexts.RunContext(c.UserContext(), c.Params("team"))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(runContextView(rc))
}

func runContextView(rc app.RunContext) RunContext {
	q := rc.Quotas
	return RunContext{
		Team: rc.Team, GlobalParams: rc.GlobalParams, TeamParams: rc.TeamParams,
		Secrets: append([]string{}, rc.Secrets...), // [] rather than null when there are none
		Quotas: RunQuotas{
			MaxWorkflowRunMonthly: q.MaxWorkflowRunMonthly, MaxWorkflowRunDuration: q.MaxWorkflowRunDuration,
			MaxConcurrentRuns: q.MaxConcurrentRuns, MaxWorkflowRunStorage: q.MaxWorkflowRunStorage,
		},
		TaskDefaultTimeout: rc.TaskDefaultTimeout, PreventSelfApproval: rc.PreventSelfApproval, MaxDepth: rc.MaxDepth,
		MaxTreeRuns: rc.MaxTreeRuns,
	}
}

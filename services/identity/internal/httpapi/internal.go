package httpapi

import (
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/services/identity/internal/app"
)

// InternalRoutes registers the endpoints other Baton processes call, under /internal/v1
// (libs/identityapi is their contract). r must already verify the service credential and
// admit only Baton's own services.
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
//	  200 identityapi.RunContext: what the team's runs resolve parameters against
//	  (secrets opened) and its run limits, for the runs service at each submit;
//	  404 TEAM_NOT_FOUND
func InternalRoutes(r fiber.Router, tokens *app.Tokens, principals *app.Principals, runContexts *app.RunContexts) {
	h := &internalHandlers{tokens: tokens, principals: principals, runContexts: runContexts}
	r.Post(identityapi.AuthenticateRoute, h.authenticate)
	r.Get(identityapi.RunContextRoute, h.runContext)
}

type internalHandlers struct {
	tokens      *app.Tokens
	principals  *app.Principals
	runContexts *app.RunContexts
}

func (h *internalHandlers) authenticate(c *fiber.Ctx) error {
	var req identityapi.AuthenticateRequest
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
		c.Set(identityapi.HeaderTokenExpires, res.Expires.UTC().Format(time.RFC3339Nano))
	}
	return c.JSON(res.Principal)
}

// signIn answers for a sign-in the gateway verified. Asking with a token and an email at
// once is a caller's mistake: which one was meant cannot be guessed.
func (h *internalHandlers) signIn(c *fiber.Ctx, req identityapi.AuthenticateRequest) error {
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

func (h *internalHandlers) runContext(c *fiber.Ctx) error {
	rc, err := h.runContexts.RunContext(c.UserContext(), c.Params("team"))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(runContextView(rc))
}

func runContextView(rc app.RunContext) identityapi.RunContext {
	q := rc.Quotas
	return identityapi.RunContext{
		Team: rc.Team, GlobalParams: rc.GlobalParams, TeamParams: rc.TeamParams,
		Secrets: append([]string{}, rc.Secrets...), // [] rather than null when there are none
		Quotas: identityapi.RunQuotas{
			MaxWorkflowRunMonthly: q.MaxWorkflowRunMonthly, MaxWorkflowRunDuration: q.MaxWorkflowRunDuration,
			MaxConcurrentRuns: q.MaxConcurrentRuns, MaxWorkflowRunStorage: q.MaxWorkflowRunStorage,
		},
		TaskDefaultTimeout: rc.TaskDefaultTimeout, PreventSelfApproval: rc.PreventSelfApproval, MaxDepth: rc.MaxDepth,
		MaxTreeRuns: rc.MaxTreeRuns,
	}
}

package integrations

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/param"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/workflowsapi"
)

// runsPeer is app.Runs on the runs service's internal API.
type runsPeer struct{ c *runsapi.Client }

func (r runsPeer) Submit(ctx context.Context, team, workflow string, req runsapi.SubmitRun) (runsapi.SubmittedRun, error) {
	return r.c.SubmitRun(ctx, team, workflow, req)
}

// peoplePeer is app.People on identity's sign-in by email: the chat platform vouches for
// its user's email as an OIDC issuer would. Identity answers an email nobody holds with a
// principal without an id (a first sign-in); here that is nobody to act as.
type peoplePeer struct{ c *identityapi.Client }

func (p peoplePeer) ByEmail(ctx context.Context, email string) (auth.Principal, error) {
	a, err := p.c.Authenticate(ctx, identityapi.AuthenticateRequest{Email: email})
	if err != nil {
		return auth.Principal{}, err
	}
	if a.Principal.ID == "" {
		return auth.Principal{}, apperr.New(apperr.UserNotFound, "No Baton user has the email '%s'.", email)
	}
	return a.Principal, nil
}

// teamsPeer is app.Teams on identity's read of a team.
type teamsPeer struct{ c *identityapi.Client }

func (t teamsPeer) Team(ctx context.Context, name string) error {
	_, err := t.c.Team(ctx, name)
	return err
}

// settingsTTL is how long a read of the integrations' settings is kept: every event and
// delivery needs them, and a changed setting takes effect within this.
const settingsTTL = 2 * time.Second

// settingsPeer is app.Settings on identity, each answer kept settingsTTL.
type settingsPeer struct {
	c   *identityapi.Client
	now func() time.Time

	mu   sync.Mutex
	last identityapi.IntegrationSettings
	at   time.Time
}

func (s *settingsPeer) IntegrationSettings(ctx context.Context) (identityapi.IntegrationSettings, error) {
	s.mu.Lock()
	if !s.at.IsZero() && s.now().Sub(s.at) < settingsTTL {
		defer s.mu.Unlock()
		return s.last, nil
	}
	s.mu.Unlock()
	st, err := s.c.IntegrationSettings(ctx)
	if err != nil {
		return identityapi.IntegrationSettings{}, err
	}
	s.mu.Lock()
	s.last, s.at = st, s.now()
	s.mu.Unlock()
	return st, nil
}

// actionsTimeout bounds a decision on the runs service.
const actionsTimeout = 10 * time.Second

// actionsPeer is app.Actions on the runs service's public actions API, called as the
// person deciding: the runs service applies every rule of a decision to them.
type actionsPeer struct{ c *peer.Client }

func (a actionsPeer) Decide(ctx context.Context, as auth.Principal, team, actionID string, approved bool, comments string) error {
	ctx, cancel := context.WithTimeout(ctx, actionsTimeout)
	defer cancel()
	body := []map[string]any{{"id": actionID, "approved": approved, "comments": comments}}
	ans, err := a.c.Call(ctx, as, http.MethodPut, "/api/v2/team/"+url.PathEscape(team)+"/action", nil, body, nil)
	if err != nil {
		return err
	}
	if ans.Status == http.StatusNoContent || ans.Status == http.StatusOK {
		return nil
	}
	return a.c.Refused(ans)
}

// paramsPeer is app.WorkflowParams on the workflows service: the latest version's params.
type paramsPeer struct{ c *workflowsapi.Client }

func (p paramsPeer) Params(ctx context.Context, team, workflow string) ([]param.Param, error) {
	v, err := p.c.WorkflowVersion(ctx, team, workflow, 0)
	if err != nil {
		return nil, err
	}
	return v.Params, nil
}

package integrations

import (
	"context"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/runsapi"
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

// Package paramnames lists the names of the parameter layers identity owns, for the app's
// ParamSource port (available-parameters): the global parameters and a team's, through
// identity's internal endpoints (libs/identityapi), asked as the workflows service, which
// has checked its own caller's rights on the team's workflows. Names only: values stay
// with identity, and runs read them when they run.
package paramnames

import (
	"context"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/registry"
)

// Source implements app.ParamSource with identity.
type Source struct{ identity *identityapi.Client }

// New returns the source of parameter names asking identity as self.
func New(resolver registry.Resolver, signer *auth.Signer, self auth.Principal) *Source {
	return &Source{identity: identityapi.New(resolver, signer, self)}
}

// GlobalParams implements app.ParamSource.
func (s *Source) GlobalParams(ctx context.Context) ([]string, error) {
	g, err := s.identity.GlobalParameters(ctx)
	if err != nil {
		return nil, err
	}
	return append([]string{}, g.Names...), nil
}

// TeamParams implements app.ParamSource.
func (s *Source) TeamParams(ctx context.Context, team string) ([]string, error) {
	wc, err := s.identity.WorkflowContext(ctx, team)
	if err != nil {
		return nil, err
	}
	return append([]string{}, wc.ParamNames...), nil
}

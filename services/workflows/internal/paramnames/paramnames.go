// Package paramnames lists the names of the parameter layers identity owns, for the app's
// ParamSource port (available-parameters): the global parameters through identity's
// internal endpoint (libs/identityapi), a team's through identity's public read of the
// team, as the caller, who sees the parameters the caller may see.
package paramnames

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
)

// timeout bounds a team read.
const timeout = 5 * time.Second

// Source implements app.ParamSource with identity.
type Source struct {
	internal *identityapi.Client
	public   *peer.Client
	self     auth.Principal
}

// New returns the source of parameter names asking identity, as self when the context
// carries no caller.
func New(resolver registry.Resolver, signer *auth.Signer, self auth.Principal) *Source {
	return &Source{internal: identityapi.New(resolver, signer, self),
		public: peer.New(identityapi.Service, resolver, signer, timeout), self: self}
}

// GlobalParams implements app.ParamSource.
func (s *Source) GlobalParams(ctx context.Context) ([]string, error) {
	g, err := s.internal.GlobalParameters(ctx)
	if err != nil {
		return nil, err
	}
	return append([]string{}, g.Names...), nil
}

// TeamParams implements app.ParamSource.
func (s *Source) TeamParams(ctx context.Context, team string) ([]string, error) {
	caller, ok := auth.FromContext(ctx)
	if !ok {
		caller = s.self
	}
	var body struct {
		Parameters []struct {
			Name string `json:"name"`
		} `json:"parameters"`
	}
	a, err := s.public.Call(ctx, caller, http.MethodGet, "/api/v2/team/"+url.PathEscape(team), nil, nil, &body)
	if err != nil {
		return nil, err
	}
	if a.Status != http.StatusOK {
		return nil, s.public.Unavailable(fmt.Errorf("read team %s: status %d %s", team, a.Status, a.Reason))
	}
	out := make([]string, 0, len(body.Parameters))
	for _, p := range body.Parameters {
		out = append(out, p.Name)
	}
	return out, nil
}

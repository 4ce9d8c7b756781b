package app

import (
	"context"
	"strings"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// SignIn returns whom a verified sign-in acts for: the gateway has checked a JWT with the
// OIDC issuer and asks by the email it carries. A user holding the email gets their
// principal as a session (their roles and teams as they are now). An email nobody holds yet
// gets a session principal with the email and name but no id, roles or teams: GET /profile
// registers the user from it, and nothing else accepts it. Inactive and deleted users are
// refused with UNAUTHENTICATED, as is an email that is not an address.
func (s *Principals) SignIn(ctx context.Context, email, name string) (auth.Principal, error) {
	e, err := domain.NormalizeEmail(email)
	if err != nil {
		// The issuer vouched for something that is not an address: there is nobody to be.
		return auth.Principal{}, apperr.New(apperr.Unauthenticated, "The sign-in carries no usable email address.")
	}
	p, err := s.ForEmail(ctx, e)
	if apperr.HasReason(err, apperr.UserNotFound) {
		return auth.Principal{Type: auth.TypeSession, Email: e, Name: strings.TrimSpace(name)}, nil
	}
	if err != nil {
		return auth.Principal{}, err
	}
	p.Type = auth.TypeSession
	return p, nil
}

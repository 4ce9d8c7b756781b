package authn

import (
	"context"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

// Chain asks its authenticators in turn: the first to accept a credential answers. One
// that refuses it (UNAUTHENTICATED) passes it on; any other failure (a dependency down)
// ends the chain, so an outage is never reported as a bad credential.
type Chain []Authenticator

// Authenticate implements Authenticator.
func (c Chain) Authenticate(ctx context.Context, credential string) (auth.Principal, error) {
	if credential == "" {
		return auth.Principal{}, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	err := error(apperr.New(apperr.Unauthenticated, "The credential is not valid."))
	for _, a := range c {
		p, aerr := a.Authenticate(ctx, credential)
		if aerr == nil {
			return p, nil
		}
		if !apperr.HasReason(aerr, apperr.Unauthenticated) {
			return auth.Principal{}, aerr
		}
		err = aerr
	}
	return auth.Principal{}, err
}

// Sweep lets each authenticator that keeps a cache drop what has expired.
func (c Chain) Sweep(now time.Time) {
	for _, a := range c {
		if s, ok := a.(interface{ Sweep(time.Time) }); ok {
			s.Sweep(now)
		}
	}
}

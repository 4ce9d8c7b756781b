package authn

import (
	"context"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

// Shaped is an Authenticator of credentials of one shape only: signed JWTs, Baton's opaque
// tokens. In a Chain it sees only credentials of its shape, and its answer about them is
// final: a JWT the issuer's keys do not verify is refused, never tried as an opaque token
// (nor sent to the identity service).
type Shaped interface {
	Authenticator
	// Handles reports whether credential has the authenticator's shape. It looks at the
	// credential only, cheaply: it runs on every request.
	Handles(credential string) bool
}

// Chain asks its authenticators in turn: the first to accept a credential answers. One
// that refuses it (UNAUTHENTICATED) passes it on; any other failure (a dependency down)
// ends the chain, so an outage is never reported as a bad credential. A Shaped
// authenticator is asked only about credentials of its shape and has the last word on
// them; a credential nobody handles is refused.
type Chain []Authenticator

// Forgetter is an Authenticator that remembers answers and can drop one.
type Forgetter interface {
	Forget(credential string)
}

// Forget drops what every remembering authenticator of the chain knows of credential.
func (c Chain) Forget(credential string) {
	for _, a := range c {
		if f, ok := a.(Forgetter); ok {
			f.Forget(credential)
		}
	}
}

// Authenticate implements Authenticator.
func (c Chain) Authenticate(ctx context.Context, credential string) (auth.Principal, error) {
	if credential == "" {
		return auth.Principal{}, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	err := error(apperr.New(apperr.Unauthenticated, "The credential is not valid."))
	for _, a := range c {
		if s, ok := a.(Shaped); ok {
			if !s.Handles(credential) {
				continue
			}
			return s.Authenticate(ctx, credential)
		}
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

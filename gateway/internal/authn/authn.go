// Package authn turns the credential a request presents into the principal it acts for.
package authn

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

// Authenticator resolves a credential (a bearer token; "" when the request has none) to its
// principal. It answers an apperr.Unauthenticated error for missing, unknown, expired or
// revoked credentials. Implementations must be safe for concurrent use; one backed by the
// identity service is expected to cache answers briefly, keyed by a hash of the credential.
type Authenticator interface {
	Authenticate(ctx context.Context, credential string) (auth.Principal, error)
}

// Bootstrap authenticates only the configured bootstrap admin token, the one credential
// that exists before the identity service has issued any.
type Bootstrap struct {
	digest [sha256.Size]byte
	set    bool
}

// NewBootstrap returns a Bootstrap accepting token; with an empty token nothing
// authenticates.
func NewBootstrap(token string) *Bootstrap {
	return &Bootstrap{digest: sha256.Sum256([]byte(token)), set: token != ""}
}

// BootstrapPrincipal is who the bootstrap token acts for.
func BootstrapPrincipal() auth.Principal {
	return auth.Principal{Type: auth.TypeGlobal, ID: "bootstrap", Name: "bootstrap admin", Roles: []string{"admin"}}
}

// Authenticate implements Authenticator.
func (b *Bootstrap) Authenticate(_ context.Context, credential string) (auth.Principal, error) {
	if credential == "" {
		return auth.Principal{}, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	// Comparing digests keeps the comparison constant-time whatever the lengths.
	d := sha256.Sum256([]byte(credential))
	if !b.set || subtle.ConstantTimeCompare(d[:], b.digest[:]) != 1 {
		return auth.Principal{}, apperr.New(apperr.Unauthenticated, "The credential is not valid.")
	}
	return BootstrapPrincipal(), nil
}

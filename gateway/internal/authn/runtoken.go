package authn

import (
	"context"
	"strings"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

// RunTokens authenticates runs' callback tokens (the `callback-token` context parameter,
// auth.Signer.RunToken): the service key's signature is the whole check, so there is no
// lookup and nothing to cache. A token acts as auth.RunPrincipal of its run, which the
// routing table admits on the callbacks only; the runs service checks that the callback
// names that run and that the run has not ended.
type RunTokens struct {
	signer *auth.Signer
}

// NewRunTokens returns the authenticator of run tokens signed with signer's key.
func NewRunTokens(signer *auth.Signer) *RunTokens { return &RunTokens{signer: signer} }

// IsRunToken reports whether credential has the shape of a run token: the btr_ prefix.
func IsRunToken(credential string) bool { return strings.HasPrefix(credential, auth.RunTokenPrefix) }

// Handles implements Shaped: run tokens are the signer's alone to judge.
func (r *RunTokens) Handles(credential string) bool { return IsRunToken(credential) }

// Authenticate implements Authenticator.
func (r *RunTokens) Authenticate(_ context.Context, credential string) (auth.Principal, error) {
	runID, ok := r.signer.VerifyRunToken(credential)
	if !ok {
		return auth.Principal{}, apperr.New(apperr.Unauthenticated, "The credential is not valid.")
	}
	return auth.RunPrincipal(runID), nil
}

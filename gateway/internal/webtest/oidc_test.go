package webtest_test

import (
	"testing"

	"github.com/baton-flow/baton/gateway/internal/authn/oidctest"
)

// oidcClientID is the client the UI signs in as at the test issuer, and the audience the
// instance checks JWTs for.
const oidcClientID = "baton-ui"

// TestBrowserOIDC runs the OpenID Connect sign-in flow (e2e/oidc.spec.ts) against a fresh
// standalone instance configured with a test issuer, which signs the browser in at once
// (oidctest). The flow finds the issuer in BATON_OIDC_ISSUER and tells it whom to sign in,
// or which error to answer, with PUT <issuer>/sign-in.
func TestBrowserOIDC(t *testing.T) {
	env := prepare(t)
	issuer := oidctest.New(t, oidcClientID)
	b := start(t, map[string]string{
		"BATON_OIDC_ISSUER":   issuer.URL,
		"BATON_OIDC_AUDIENCE": oidcClientID,
	})
	playwright(t, env, b, []string{"oidc.spec.ts"}, map[string]string{"BATON_OIDC_ISSUER": issuer.URL})
}

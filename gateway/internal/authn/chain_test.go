package authn

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

// shapedStub answers every credential of its shape alike and counts the questions.
type shapedStub struct {
	shape func(string) bool
	p     auth.Principal
	err   error
	calls atomic.Int64
}

func (s *shapedStub) Handles(credential string) bool { return s.shape(credential) }

func (s *shapedStub) Authenticate(context.Context, string) (auth.Principal, error) {
	s.calls.Add(1)
	return s.p, s.err
}

func TestChainRoutesByShape(t *testing.T) {
	t.Parallel()
	jwt := "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"
	opaque := "btu_" + strings.Repeat("a", 43)
	refused := apperr.New(apperr.Unauthenticated, "refused")
	signer := testSigner(t)
	runToken := signer.RunToken("run-1")
	tests := []struct {
		name         string
		oidc         *shapedStub // nil: OIDC is not configured
		credential   string
		want         auth.Principal
		wantReason   apperr.Reason
		wantOIDC     int64 // questions to OIDC
		wantIdentity int64 // questions to identity
	}{
		{name: "the bootstrap token first", oidc: &shapedStub{}, credential: "bt-boot", want: BootstrapPrincipal()},
		{name: "a JWT goes to OIDC", oidc: &shapedStub{p: devSession}, credential: jwt, want: devSession, wantOIDC: 1},
		{name: "a refused JWT is never tried as a token", oidc: &shapedStub{err: refused}, credential: jwt, wantReason: apperr.Unauthenticated, wantOIDC: 1},
		{name: "OIDC down stays 503", oidc: &shapedStub{err: issuerUnavailable(errors.New("down"))}, credential: jwt, wantReason: apperr.DependencyUnavailable, wantOIDC: 1},
		{name: "a JWT without OIDC is refused", credential: jwt, wantReason: apperr.Unauthenticated},
		{name: "an opaque token goes to identity", oidc: &shapedStub{}, credential: opaque, want: teamPrincipal, wantIdentity: 1},
		{name: "anything else is refused unasked", oidc: &shapedStub{}, credential: "guess", wantReason: apperr.Unauthenticated},
		{name: "a run token is the signer's to verify", oidc: &shapedStub{}, credential: runToken, want: auth.RunPrincipal("run-1")},
		{name: "a forged run token is refused unasked", oidc: &shapedStub{}, credential: "btr_run-1." + strings.Repeat("A", 43),
			wantReason: apperr.Unauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			identity := &shapedStub{shape: IsOpaqueToken, p: teamPrincipal}
			chain := Chain{NewBootstrap("bt-boot"), NewRunTokens(signer)}
			if tt.oidc != nil {
				tt.oidc.shape = IsJWT
				chain = append(chain, tt.oidc)
			}
			chain = append(chain, identity)
			p, err := chain.Authenticate(context.Background(), tt.credential)
			if tt.oidc != nil {
				assert.Equal(t, tt.wantOIDC, tt.oidc.calls.Load(), "questions to OIDC")
			}
			assert.Equal(t, tt.wantIdentity, identity.calls.Load(), "questions to identity")
			if tt.wantReason != (apperr.Reason{}) {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, tt.wantReason), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p)
		})
	}
}

func TestIdentitySignIn(t *testing.T) {
	t.Parallel()
	signer := testSigner(t)
	id := newFakeIdentity(t, signer)
	unregistered := auth.Principal{Type: auth.TypeSession, Email: "new@example.com", Name: "New"}
	id.set("email:dev@example.com", answer{status: http.StatusOK, principal: devSession})
	id.set("email:Dev@Example.com", answer{status: http.StatusOK, principal: devSession})
	id.set("email:new@example.com", answer{status: http.StatusOK, principal: unregistered})
	id.set("email:off@example.com", answer{status: http.StatusUnauthorized, body: `{"reason":"UNAUTHENTICATED"}`})
	id.set("email:user@example.com", answer{status: http.StatusOK, principal: auth.Principal{Type: auth.TypeUser, ID: "u", Email: "user@example.com"}})
	id.set("email:other@example.com", answer{status: http.StatusOK, principal: devSession})
	id.set("email:rights@example.com", answer{status: http.StatusOK, principal: auth.Principal{Type: auth.TypeSession, Email: "rights@example.com", Roles: []string{"admin"}}})
	id.set("email:someone@example.com", answer{status: http.StatusOK, principal: auth.Principal{Type: auth.TypeSession, Email: "someone@example.com", Person: "u"}})
	id.set("email:broken@example.com", answer{status: http.StatusInternalServerError, body: `{}`})
	a := newIdentity(t, IdentityConfig{Resolver: resolverFor(id.url), Signer: signer})
	tests := []struct {
		name       string
		email      string
		want       auth.Principal
		wantReason apperr.Reason
	}{
		{name: "a registered user", email: "dev@example.com", want: devSession},
		{name: "the email as the issuer spells it", email: "Dev@Example.com", want: devSession},
		{name: "nobody holds the email yet", email: "new@example.com", want: unregistered},
		{name: "an inactive user", email: "off@example.com", wantReason: apperr.Unauthenticated},
		{name: "not a session: identity misbehaves", email: "user@example.com", wantReason: apperr.DependencyUnavailable},
		{name: "another user's principal", email: "other@example.com", wantReason: apperr.DependencyUnavailable},
		{name: "rights without a user", email: "rights@example.com", wantReason: apperr.DependencyUnavailable},
		{name: "a person without a user", email: "someone@example.com", wantReason: apperr.DependencyUnavailable},
		{name: "identity fails", email: "broken@example.com", wantReason: apperr.DependencyUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := a.SignIn(context.Background(), tt.email, "")
			if tt.wantReason != (apperr.Reason{}) {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, tt.wantReason), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p)
		})
	}
}

package oidctest_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/authn/oidctest"
)

const redirectURI = "http://127.0.0.1:1/signin/callback"

// noRedirects is a client that stops at the first redirect, as a test of the flow reads it.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// authorize visits the authorize endpoint and returns where it sent the browser back.
func authorize(t *testing.T, i *oidctest.Issuer, edit func(url.Values)) url.Values {
	t.Helper()
	q := url.Values{
		"response_type": {"code"}, "client_id": {i.ClientID()}, "redirect_uri": {redirectURI},
		"scope": {"openid email"}, "state": {"st-1"}, "nonce": {"n-1"},
		"code_challenge": {challenge("the-verifier")}, "code_challenge_method": {"S256"},
	}
	if edit != nil {
		edit(q)
	}
	resp, err := noRedirects.Get(i.URL + "/authorize?" + q.Encode())
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusFound, resp.StatusCode)
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(loc.String(), redirectURI+"?"), loc.String())
	back := loc.Query()
	assert.Equal(t, i.URL, back.Get("iss"))
	return back
}

func redeem(t *testing.T, i *oidctest.Issuer, code, verifier string) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(i.URL+"/token", url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "client_id": {i.ClientID()},
		"redirect_uri": {redirectURI}, "code_verifier": {verifier},
	})
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body
}

func claims(t *testing.T, token any) map[string]any {
	t.Helper()
	s, ok := token.(string)
	require.True(t, ok, "a token: %v", token)
	tok, err := jwt.ParseSigned(s, []jose.SignatureAlgorithm{jose.RS256})
	require.NoError(t, err)
	var c map[string]any
	require.NoError(t, tok.UnsafeClaimsWithoutVerification(&c))
	return c
}

func TestAuthorizationCodeFlowWithPKCE(t *testing.T) {
	t.Parallel()
	i := oidctest.New(t, "baton-ui")
	i.SetSignIn(oidctest.SignIn{Email: "ada@example.com", Name: "Ada"})

	back := authorize(t, i, nil)
	assert.Equal(t, "st-1", back.Get("state"))
	require.NotEmpty(t, back.Get("code"))

	status, body := redeem(t, i, back.Get("code"), "the-verifier")
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "Bearer", body["token_type"])
	id := claims(t, body["id_token"])
	assert.Equal(t, i.URL, id["iss"])
	assert.Equal(t, "baton-ui", id["aud"])
	assert.Equal(t, "ada@example.com", id["email"])
	assert.Equal(t, "Ada", id["name"])
	assert.Equal(t, "n-1", id["nonce"])
	access := claims(t, body["access_token"])
	assert.Equal(t, "baton-ui", access["aud"])

	// A code is good once.
	status, body = redeem(t, i, back.Get("code"), "the-verifier")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_grant", body["error"])
}

func TestTheFlowRefuses(t *testing.T) {
	t.Parallel()
	i := oidctest.New(t, "baton-ui")

	t.Run("a verifier not of the challenge", func(t *testing.T) {
		t.Parallel()
		back := authorize(t, i, nil)
		status, body := redeem(t, i, back.Get("code"), "another-verifier")
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Equal(t, "invalid_grant", body["error"])
	})
	t.Run("no PKCE", func(t *testing.T) {
		t.Parallel()
		back := authorize(t, i, func(q url.Values) { q.Del("code_challenge") })
		assert.Equal(t, "invalid_request", back.Get("error"))
		assert.Empty(t, back.Get("code"))
	})
	t.Run("another client, without redirecting", func(t *testing.T) {
		t.Parallel()
		resp, err := noRedirects.Get(i.URL + "/authorize?" + url.Values{"client_id": {"other"}, "redirect_uri": {redirectURI}}.Encode())
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	})
}

func TestSignInAnswersTheChosenError(t *testing.T) {
	t.Parallel()
	i := oidctest.New(t, "baton-ui")
	req, err := http.NewRequest(http.MethodPut, i.URL+"/sign-in", strings.NewReader(`{"error":"access_denied","errorDescription":"The user said no."}`))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusNoContent, resp.StatusCode)

	back := authorize(t, i, nil)
	assert.Equal(t, "access_denied", back.Get("error"))
	assert.Equal(t, "The user said no.", back.Get("error_description"))
	assert.Equal(t, "st-1", back.Get("state"))
	assert.Empty(t, back.Get("code"))
}

func TestEndSessionSendsTheBrowserBack(t *testing.T) {
	t.Parallel()
	i := oidctest.New(t, "baton-ui")
	resp, err := noRedirects.Get(i.URL + "/logout?" + url.Values{"post_logout_redirect_uri": {"http://127.0.0.1:1/signin"}, "state": {"s"}}.Encode())
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, http.StatusFound, resp.StatusCode)
	assert.Equal(t, "http://127.0.0.1:1/signin?state=s", resp.Header.Get("Location"))
	assert.EqualValues(t, 1, i.SignOuts())
}

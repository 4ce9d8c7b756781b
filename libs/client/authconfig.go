package client

import (
	"context"
	"net/http"
)

// AuthConfig is how a browser signs in to the server (GET /api/v2/auth/config).
type AuthConfig struct {
	// OIDC is the OpenID Connect sign-in, nil when the server signs in with tokens only.
	OIDC *OIDCSignIn `json:"oidc,omitempty"`
}

// OIDCSignIn is what a public client needs to sign in with the server's OpenID Connect
// issuer by the authorization code flow with PKCE.
type OIDCSignIn struct {
	Issuer   string   `json:"issuer"`
	ClientID string   `json:"clientId"`
	Scopes   []string `json:"scopes"`
	// Bearer names the granted token the server checks: "idToken" or "accessToken".
	Bearer string `json:"bearer"`
}

// GetAuthConfig reads how the server signs browsers in; it needs no credentials.
// getAuthConfig.
func (c *Client) GetAuthConfig(ctx context.Context) (*AuthConfig, error) {
	var out AuthConfig
	_, err := c.call(ctx, http.MethodGet, p("auth", "config"), nil, nil, &out)
	return ret(&out, err)
}

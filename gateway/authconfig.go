package gateway

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/client"
)

// DefaultOIDCScopes are the scopes the web UI asks the issuer for unless BATON_OIDC_SCOPES
// says otherwise: the ID token then names the user's email, which is whom it acts for.
var DefaultOIDCScopes = []string{"openid", "email", "profile"}

// Bearers the web UI sends after an OIDC sign-in (AuthConfig's oidc.bearer).
const (
	// BearerIDToken: the ID token, whose audience is the client id, which is the audience
	// JWTs are checked for.
	BearerIDToken = "idToken"
	// BearerAccessToken: the access token, when the client id differs from the audience;
	// the issuer must grant it as a JWT for the audience.
	BearerAccessToken = "accessToken"
)

// AuthConfig is the answer of GET /api/v2/auth/config: how a browser signs in here, as
// the SDK reads it (one definition of the wire shape). OIDC is nil when OpenID Connect
// sign-in is off (only tokens sign in).
type AuthConfig = client.AuthConfig

// OIDCSignIn is what a public client (the web UI) needs to sign in with the issuer by the
// authorization code flow with PKCE.
type OIDCSignIn = client.OIDCSignIn

// authConfig serves the sign-in settings, encoded once: they change only with the
// configuration, which needs a restart.
type authConfig struct {
	body   []byte
	origin string // the issuer's origin, or empty
}

func newAuthConfig(cfg OIDCConfig) (*authConfig, error) {
	var ac AuthConfig
	origin := ""
	if cfg.Issuer != "" {
		u, err := url.Parse(cfg.Issuer)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, fmt.Errorf("the OIDC issuer %q is not an http(s) URL", cfg.Issuer)
		}
		origin = u.Scheme + "://" + u.Host
		clientID := cfg.ClientID
		if clientID == "" {
			clientID = cfg.Audience
		}
		bearer := BearerIDToken
		if clientID != cfg.Audience {
			bearer = BearerAccessToken
		}
		scopes := cfg.Scopes
		if len(scopes) == 0 {
			scopes = DefaultOIDCScopes
		}
		ac.OIDC = &OIDCSignIn{Issuer: cfg.Issuer, ClientID: clientID, Scopes: scopes, Bearer: bearer}
	}
	body, err := json.Marshal(ac)
	if err != nil {
		return nil, fmt.Errorf("encode the sign-in settings: %w", err)
	}
	return &authConfig{body: body, origin: origin}, nil
}

// issuerOrigin is the OIDC issuer's scheme and host, or empty when OIDC sign-in is off.
func (a *authConfig) issuerOrigin() string { return a.origin }

func (a *authConfig) serve(c *fiber.Ctx) error {
	// Revalidated on every use: a restart with another issuer must not be masked by a cache.
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(a.body)
}

// parseScopes reads BATON_OIDC_SCOPES: scope tokens separated by spaces or commas, openid
// among them (without it the issuer grants no ID token).
func parseScopes(v string) ([]string, error) {
	var scopes []string
	for _, s := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		for _, r := range s {
			// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
			if r < 0x21 || r > 0x7e || r == '"' || r == '\\' {
				return nil, fmt.Errorf("BATON_OIDC_SCOPES: %q is not a scope", s)
			}
		}
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	if !slices.Contains(scopes, "openid") {
		return nil, fmt.Errorf("BATON_OIDC_SCOPES: %q lacks openid, without which the issuer grants no ID token", v)
	}
	return scopes, nil
}

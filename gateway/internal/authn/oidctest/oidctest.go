// Package oidctest is an OpenID Connect issuer for tests: a discovery document and a JSON
// Web Key Set served on loopback, RSA keys it generates and rotates, and JWTs it signs. It
// also signs a browser in by the authorization code flow with PKCE (see flow.go): an
// authorize endpoint that signs the chosen user in at once, a token endpoint and an
// end-session endpoint.
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Key is a signing key and the id it is published under.
type Key struct {
	ID      string
	Private *rsa.PrivateKey
}

// NewKey generates an RSA key with id.
func NewKey(t testing.TB, id string) Key {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("oidctest: generate key: %v", err)
	}
	return Key{ID: id, Private: k}
}

// Issuer is a running test issuer. Its URL is both where it serves and its "iss".
type Issuer struct {
	URL      string
	Audience string

	mu        sync.Mutex
	published []Key // the key set; the first signs
	serial    int
	fetches   atomic.Int64
	flow      flow
}

// New starts an issuer for tokens meant for audience, with one published signing key; it
// stops when the test ends.
func New(t testing.TB, audience string) *Issuer {
	t.Helper()
	i := &Issuer{Audience: audience}
	i.published = []Key{NewKey(t, "key-0")}
	i.flow.init(audience)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		// Browsers read it from the signing-in page, on another origin.
		w.Header().Set("Access-Control-Allow-Origin", "*")
		writeJSON(w, map[string]any{
			"issuer":                                i.URL,
			"jwks_uri":                              i.URL + "/keys",
			"authorization_endpoint":                i.URL + "/authorize",
			"token_endpoint":                        i.URL + "/token",
			"end_session_endpoint":                  i.URL + "/logout",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code"},
			"subject_types_supported":               []string{"public"},
			"scopes_supported":                      []string{"openid", "email", "profile"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	i.routeFlow(mux)
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, _ *http.Request) {
		i.fetches.Add(1)
		i.mu.Lock()
		set := jose.JSONWebKeySet{}
		for _, k := range i.published {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.Private.PublicKey, KeyID: k.ID, Algorithm: string(jose.RS256), Use: "sig"})
		}
		i.mu.Unlock()
		writeJSON(w, set)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	i.URL = srv.URL
	return i
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// KeyFetches counts the requests for the key set so far.
func (i *Issuer) KeyFetches() int64 { return i.fetches.Load() }

// Rotate publishes a new key, which signs from now on; the older keys stay published.
func (i *Issuer) Rotate(t testing.TB) Key {
	t.Helper()
	i.mu.Lock()
	i.serial++
	id := fmt.Sprintf("key-%d", i.serial)
	i.mu.Unlock()
	k := NewKey(t, id)
	i.mu.Lock()
	defer i.mu.Unlock()
	i.published = append([]Key{k}, i.published...)
	return k
}

// Retire withdraws every published key but the signing one.
func (i *Issuer) Retire() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.published = i.published[:1]
}

// SigningKey is the key Token signs with.
func (i *Issuer) SigningKey() Key {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.published[0]
}

// Claims are valid claims for a sign-in by email at now, for an hour.
func (i *Issuer) Claims(now time.Time, email string) map[string]any {
	return map[string]any{
		"iss":            i.URL,
		"aud":            i.Audience,
		"sub":            "sub-" + email,
		"email":          email,
		"email_verified": true,
		"name":           "Name of " + email,
		"iat":            now.Unix(),
		"nbf":            now.Unix(),
		"exp":            now.Add(time.Hour).Unix(),
	}
}

// Token signs claims with the signing key, RS256.
func (i *Issuer) Token(t testing.TB, claims map[string]any) string {
	t.Helper()
	return Sign(t, i.SigningKey(), jose.RS256, claims)
}

// Sign signs claims with k (its id in the header) using alg, an RSA algorithm.
func Sign(t testing.TB, k Key, alg jose.SignatureAlgorithm, claims map[string]any) string {
	t.Helper()
	return sign(t, jose.SigningKey{Algorithm: alg, Key: k.Private}, k.ID, claims)
}

// SignHMAC "signs" claims with HS256 and secret as the key: what an attacker does with the
// issuer's public key, hoping a verifier uses it as an HMAC secret.
func SignHMAC(t testing.TB, kid string, secret []byte, claims map[string]any) string {
	t.Helper()
	return sign(t, jose.SigningKey{Algorithm: jose.HS256, Key: secret}, kid, claims)
}

func sign(t testing.TB, key jose.SigningKey, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), kid)
	signer, err := jose.NewSigner(key, opts)
	if err != nil {
		t.Fatalf("oidctest: signer: %v", err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatalf("oidctest: claims: %v", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatalf("oidctest: sign: %v", err)
	}
	token, err := jws.CompactSerialize()
	if err != nil {
		t.Fatalf("oidctest: serialize: %v", err)
	}
	return token
}

// Unsigned is claims as a JWT with "alg": "none" and no signature.
func Unsigned(t testing.TB, kid string, claims map[string]any) string {
	t.Helper()
	header, err := json.Marshal(map[string]string{"alg": "none", "typ": "JWT", "kid": kid})
	if err != nil {
		t.Fatalf("oidctest: header: %v", err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatalf("oidctest: claims: %v", err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc(header) + "." + enc(payload) + "."
}

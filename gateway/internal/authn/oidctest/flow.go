package oidctest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// SignIn is whom the authorize endpoint signs in, or the error it answers with instead.
type SignIn struct {
	// Email and Name are the user's claims; Name is left out of the tokens when empty.
	Email string `json:"email,omitempty"`
	Name  string `json:"name,omitempty"`
	// Error, when set, is the OAuth error the authorize endpoint redirects back with
	// (access_denied, login_required…), with ErrorDescription.
	Error            string `json:"error,omitempty"`
	ErrorDescription string `json:"errorDescription,omitempty"`
	// ExpiresIn is the granted tokens' lifetime in seconds; an hour when zero. A negative one
	// grants tokens already expired, as a session left open past its end has.
	ExpiresIn int `json:"expiresIn,omitempty"`
}

// DefaultSignIn is whom the authorize endpoint signs in until SetSignIn says otherwise.
var DefaultSignIn = SignIn{Email: "user@example.com", Name: "Test User"}

// flow is the state of the browser sign-in: whom it signs in, the codes granted and not
// yet redeemed, and the sign-outs seen.
type flow struct {
	mu       sync.Mutex
	clientID string
	signIn   SignIn
	codes    map[string]grant
	signOuts atomic.Int64
}

// grant is what an authorization code stands for.
type grant struct {
	clientID, redirectURI, challenge, nonce, scope string
	signIn                                         SignIn
}

func (f *flow) init(clientID string) {
	f.clientID = clientID
	f.signIn = DefaultSignIn
	f.codes = map[string]grant{}
}

// ClientID is the only client the authorize endpoint knows (a public one: no secret, PKCE
// required); the audience New was given.
func (i *Issuer) ClientID() string { return i.flow.clientID }

// SetSignIn makes the authorize endpoint sign s in from now on (or answer s.Error).
// PUT /sign-in with s as JSON does the same for drivers outside the process (a browser
// test); it is a test issuer's control, nothing an issuer has.
func (i *Issuer) SetSignIn(s SignIn) {
	i.flow.mu.Lock()
	defer i.flow.mu.Unlock()
	i.flow.signIn = s
}

// SignOuts counts the visits to the end-session endpoint.
func (i *Issuer) SignOuts() int64 { return i.flow.signOuts.Load() }

func (i *Issuer) routeFlow(mux *http.ServeMux) {
	mux.HandleFunc("GET /authorize", i.authorize)
	mux.HandleFunc("POST /token", i.token)
	mux.HandleFunc("OPTIONS /token", func(w http.ResponseWriter, _ *http.Request) {
		cors(w)
		w.Header().Set("Access-Control-Allow-Methods", "POST")
		w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /logout", i.logout)
	mux.HandleFunc("PUT /sign-in", func(w http.ResponseWriter, r *http.Request) {
		var s SignIn
		if err := json.NewDecoder(r.Body).Decode(&s); err != nil || (s.Email == "" && s.Error == "") {
			http.Error(w, "a JSON SignIn with an email or an error", http.StatusBadRequest)
			return
		}
		i.SetSignIn(s)
		w.WriteHeader(http.StatusNoContent)
	})
}

func cors(w http.ResponseWriter) { w.Header().Set("Access-Control-Allow-Origin", "*") }

// authorize signs the configured user in at once and redirects back with a code, as an
// issuer does after its login page. A request naming another client or no absolute
// redirect URI is answered here (400), never redirected, as RFC 6749 §4.1.2.1 asks.
func (i *Issuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if q.Get("client_id") != i.flow.clientID || err != nil || !redirect.IsAbs() || redirect.Host == "" {
		http.Error(w, "unknown client_id or redirect_uri", http.StatusBadRequest)
		return
	}
	back := func(params url.Values) {
		params.Set("iss", i.URL)
		if s := q.Get("state"); s != "" {
			params.Set("state", s)
		}
		u := *redirect
		u.RawQuery = params.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	switch {
	case q.Get("response_type") != "code":
		back(url.Values{"error": {"unsupported_response_type"}, "error_description": {"Only the authorization code flow is served."}})
		return
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		back(url.Values{"error": {"invalid_request"}, "error_description": {"A public client must send a PKCE code_challenge with method S256."}})
		return
	}
	i.flow.mu.Lock()
	s := i.flow.signIn
	i.flow.mu.Unlock()
	if s.Error != "" {
		back(url.Values{"error": {s.Error}, "error_description": {s.ErrorDescription}})
		return
	}
	code := randomString()
	i.flow.mu.Lock()
	i.flow.codes[code] = grant{
		clientID: q.Get("client_id"), redirectURI: q.Get("redirect_uri"), challenge: q.Get("code_challenge"),
		nonce: q.Get("nonce"), scope: q.Get("scope"), signIn: s,
	}
	i.flow.mu.Unlock()
	back(url.Values{"code": {code}})
}

// token redeems a code once, for the client and redirect URI it was granted to, with the
// PKCE verifier of its challenge: an ID token for the client and an access token for the
// audience, both JWTs.
func (i *Issuer) token(w http.ResponseWriter, r *http.Request) {
	cors(w)
	fail := func(code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	if err := r.ParseForm(); err != nil {
		fail("invalid_request", "The body is not a form.")
		return
	}
	if r.PostForm.Get("grant_type") != "authorization_code" {
		fail("unsupported_grant_type", "Only authorization_code is granted.")
		return
	}
	i.flow.mu.Lock()
	g, ok := i.flow.codes[r.PostForm.Get("code")]
	delete(i.flow.codes, r.PostForm.Get("code"))
	i.flow.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case !ok:
		fail("invalid_grant", "The code is unknown or was used.")
		return
	case r.PostForm.Get("client_id") != g.clientID || r.PostForm.Get("redirect_uri") != g.redirectURI:
		fail("invalid_grant", "The code was granted to another client or redirect URI.")
		return
	case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		fail("invalid_grant", "The code_verifier does not match the code_challenge.")
		return
	}
	now := time.Now()
	life := time.Duration(g.signIn.ExpiresIn) * time.Second
	if g.signIn.ExpiresIn == 0 {
		life = time.Hour
	}
	claims := func(aud string) map[string]any {
		c := map[string]any{
			"iss": i.URL, "aud": aud, "sub": "sub-" + g.signIn.Email,
			"email": g.signIn.Email, "email_verified": true,
			"iat": now.Unix(), "exp": now.Add(life).Unix(), "jti": randomString(),
		}
		if life > 0 {
			c["nbf"] = now.Unix()
		}
		if g.signIn.Name != "" {
			c["name"] = g.signIn.Name
		}
		return c
	}
	id := claims(g.clientID)
	if g.nonce != "" {
		id["nonce"] = g.nonce
	}
	access := claims(i.Audience)
	access["scope"] = g.scope
	key := i.SigningKey()
	idToken, err := signJSON(key, id)
	if err == nil {
		var accessToken string
		accessToken, err = signJSON(key, access)
		if err == nil {
			w.Header().Set("Cache-Control", "no-store")
			writeJSON(w, map[string]any{
				"access_token": accessToken, "id_token": idToken, "token_type": "Bearer",
				"expires_in": int(life.Seconds()), "scope": g.scope,
			})
			return
		}
	}
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// logout ends the session (there is none to end here) and sends the browser back where
// the client asked.
func (i *Issuer) logout(w http.ResponseWriter, r *http.Request) {
	i.flow.signOuts.Add(1)
	back := r.URL.Query().Get("post_logout_redirect_uri")
	if u, err := url.Parse(back); back == "" || err != nil || !u.IsAbs() {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("Signed out.\n"))
		return
	}
	if s := r.URL.Query().Get("state"); s != "" {
		u, _ := url.Parse(back)
		q := u.Query()
		q.Set("state", s)
		u.RawQuery = q.Encode()
		back = u.String()
	}
	http.Redirect(w, r, back, http.StatusFound)
}

// signJSON signs claims with k, RS256, without a testing.TB: the token endpoint runs on the
// server's goroutines.
func signJSON(k Key, claims map[string]any) (string, error) {
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), k.ID)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: k.Private}, opts)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

func randomString() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

package authn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// signingAlgs are the signatures a JWT may carry: public-key ones only. "none" and the
// HMAC algorithms are never accepted, so neither an unsigned token nor one "signed" with
// the issuer's public key as an HMAC secret gets through.
var signingAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// maxKeySetBytes bounds a key set document; real ones are a few kilobytes.
const maxKeySetBytes = 1 << 20

// errNoKeys means the issuer's keys have never been fetched: no JWT can be checked yet.
var errNoKeys = errors.New("the issuer's signing keys could not be fetched")

// keySet is the issuer's JSON Web Key Set, fetched from its jwks_uri and kept in memory.
// It implements go-oidc's KeySet. Unlike go-oidc's RemoteKeySet, which fetches the set
// again for every token naming a key it does not know, it fetches at most once per
// refresh interval, so tokens with made-up key ids cannot make the gateway flood the
// issuer; a key the issuer has just added is picked up after at most that interval. Keys
// older than maxAge are fetched again on next use, so keys the issuer has withdrawn stop
// verifying.
type keySet struct {
	url     string
	client  *http.Client
	refresh time.Duration
	maxAge  time.Duration
	timeout time.Duration // of one fetch
	now     func() time.Time
	log     *slog.Logger

	mu       sync.RWMutex
	keys     []jose.JSONWebKey
	fetched  time.Time // of the keys held; zero before the first success
	tried    time.Time // when the last fetch began, successful or not
	inflight *keyFetch // the fetch under way, if any
}

// VerifySignature implements oidc.KeySet: it returns jwt's payload when one of the
// issuer's keys verifies its signature. go-oidc has checked the algorithm already;
// parsing again with the same list keeps that true whoever calls.
func (k *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSigned(jwt, signingAlgs)
	if err != nil {
		return nil, fmt.Errorf("malformed jwt: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("a jwt must carry exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	keys := k.current(ctx)
	payload, known := verifyWith(jws, keys, kid)
	if payload != nil {
		return payload, nil
	}
	if known {
		// The key is known and did not verify: the signature is bad, the set is not stale.
		return nil, errors.New("the signature does not verify")
	}
	// A key id not seen before: the issuer may have rotated its keys.
	if fresh, ok := k.fetchIfDue(ctx); ok {
		if payload, _ := verifyWith(jws, fresh, kid); payload != nil {
			return payload, nil
		}
	}
	return nil, fmt.Errorf("no signing key of the issuer verifies the signature (kid %q)", kid)
}

// verifyWith tries the keys with id kid (every key when kid is empty). known reports
// whether the set has a key with that id.
func verifyWith(jws *jose.JSONWebSignature, keys []jose.JSONWebKey, kid string) (payload []byte, known bool) {
	for i := range keys {
		if kid != "" && keys[i].KeyID != kid {
			continue
		}
		known = kid != ""
		if p, err := jws.Verify(&keys[i]); err == nil {
			return p, true
		}
	}
	return nil, known
}

// ready makes sure keys have been fetched once; errNoKeys when they cannot be.
func (k *keySet) ready(ctx context.Context) error {
	if len(k.current(ctx)) > 0 {
		return nil
	}
	if keys, ok := k.fetchIfDue(ctx); ok && len(keys) > 0 {
		return nil
	}
	return errNoKeys
}

// current returns the keys held, fetching them first when they are older than maxAge
// (and a fetch is due); when that fetch fails the old keys stay in use.
func (k *keySet) current(ctx context.Context) []jose.JSONWebKey {
	k.mu.RLock()
	keys, fetched := k.keys, k.fetched
	k.mu.RUnlock()
	if !fetched.IsZero() && k.now().Sub(fetched) < k.maxAge {
		return keys
	}
	if fresh, ok := k.fetchIfDue(ctx); ok {
		return fresh
	}
	return keys
}

// fetchIfDue fetches the set unless the last fetch began less than the refresh interval
// ago; a caller arriving while a fetch is under way waits for it. ok is false when no fetch
// was made or it failed.
func (k *keySet) fetchIfDue(ctx context.Context) ([]jose.JSONWebKey, bool) {
	k.mu.Lock()
	f := k.inflight
	if f == nil {
		now := k.now()
		if !k.tried.IsZero() && now.Sub(k.tried) < k.refresh {
			k.mu.Unlock()
			return nil, false
		}
		k.tried = now
		f = &keyFetch{done: make(chan struct{})}
		k.inflight = f
		go k.run(ctx, f)
	}
	k.mu.Unlock()
	select {
	case <-f.done:
		return f.keys, f.err == nil
	case <-ctx.Done():
		return nil, false
	}
}

// keyFetch is one fetch of the set, shared by whoever waits for it.
type keyFetch struct {
	done chan struct{}
	keys []jose.JSONWebKey
	err  error
}

// run fetches the set for f and keeps the keys when that works.
func (k *keySet) run(ctx context.Context, f *keyFetch) {
	// Shared by every request waiting on it, so none of theirs may end it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.timeout)
	defer cancel()
	keys, err := k.fetch(ctx)
	if err != nil {
		// The URL is configuration, not a secret, and the error holds no token.
		k.log.WarnContext(ctx, "could not fetch the OIDC issuer's signing keys",
			slog.String("url", k.url), slog.String("error", err.Error()))
	}
	k.mu.Lock()
	if err == nil {
		k.keys, k.fetched = keys, k.now()
	}
	k.inflight = nil
	k.mu.Unlock()
	f.keys, f.err = keys, err
	close(f.done)
}

// fetch gets the key set and keeps the public signing keys of algorithms it accepts.
func (k *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	// Past any cache on the way: a fetch is made because a key may be new.
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the key set answered %d", resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySetBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxKeySetBytes {
		return nil, fmt.Errorf("the key set is larger than %d bytes", maxKeySetBytes)
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("the key set is not JSON: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, one := range doc.Keys {
		var key jose.JSONWebKey
		// A key of a type or curve go-jose does not know is skipped, not fatal: issuers
		// publish such keys beside the ones they sign with (RFC 7517 §5).
		if err := key.UnmarshalJSON(one); err != nil {
			continue
		}
		if !key.Valid() || !key.IsPublic() || (key.Use != "" && key.Use != "sig") || !acceptedAlg(key.Algorithm) {
			continue
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, errors.New("the key set has no public signing key")
	}
	return keys, nil
}

// acceptedAlg reports whether a key restricted to alg ("" when unrestricted) may verify.
func acceptedAlg(alg string) bool {
	if alg == "" {
		return true
	}
	for _, a := range signingAlgs {
		if string(a) == alg {
			return true
		}
	}
	return false
}

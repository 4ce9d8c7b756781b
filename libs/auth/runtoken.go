package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// RunTokenPrefix starts every run token, so a credential says what it is without a lookup.
const RunTokenPrefix = "btr_"

// MaxRunTokenLength is the longest run token VerifyRunToken reads; anything longer is
// refused before any work.
const MaxRunTokenLength = 256

// runTokenLabel names the key run tokens are signed with (see deriveKey). Changing it
// invalidates every run token handed out.
const runTokenLabel = "baton/run-callback-token/v1"

// runMACLength is the length of a run token's MAC: 32 bytes in unpadded base64url.
var runMACLength = base64.RawURLEncoding.EncodedLen(sha256.Size)

// RunPrincipal is the principal a run token for runID acts as.
func RunPrincipal(runID string) Principal {
	return Principal{Type: TypeRun, ID: runID, Name: "callback token"}
}

// RunToken returns the callback token of the run with runID (the `callback-token` context
// parameter): "btr_<runID>.<mac>", the MAC being HMAC-SHA256 of the run id under a key
// derived from the service key, unpadded base64url. It authenticates as RunPrincipal(runID)
// and does not expire by itself: it is good only for that run's callbacks, which the runs
// service refuses once the run has ended. A run id no token can carry (empty, with control
// characters, or too long for the token to stay within MaxRunTokenLength) gets "".
func (s *Signer) RunToken(runID string) string {
	if !validRunID(runID) || len(RunTokenPrefix)+len(runID)+1+runMACLength > MaxRunTokenLength {
		return ""
	}
	return RunTokenPrefix + runID + "." + runMAC(s.runKey, runID)
}

// VerifyRunToken returns the run id token was minted for, and whether it verifies. It
// refuses, without telling why, anything not shaped like a run token (no prefix, no MAC, an
// empty run id, control characters such as NUL, more than MaxRunTokenLength bytes) and any
// MAC made under neither the signer's key nor one of its previous keys; the MAC is compared
// in constant time.
func (s *Signer) VerifyRunToken(token string) (runID string, ok bool) {
	if len(token) > MaxRunTokenLength {
		return "", false
	}
	rest, found := strings.CutPrefix(token, RunTokenPrefix)
	if !found {
		return "", false
	}
	// base64url has no '.', so the last one ends the run id whatever the id holds.
	dot := strings.LastIndexByte(rest, '.')
	if dot < 0 {
		return "", false
	}
	runID, mac := rest[:dot], rest[dot+1:]
	if !validRunID(runID) || len(mac) != runMACLength {
		return "", false
	}
	for _, k := range s.runKeys {
		if hmac.Equal([]byte(mac), []byte(runMAC(k, runID))) {
			return runID, true
		}
	}
	return "", false
}

func runMAC(key []byte, runID string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(runID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// validRunID reports whether id can be carried by a run token: not empty, and free of
// control characters (NUL among them) and spaces, which no run id holds and which a
// credential read from a header or a query would not keep intact.
func validRunID(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

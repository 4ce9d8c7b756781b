package domain

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
)

// Activation is whether the installation is unlocked. A fresh installation is locked until
// someone proves they hold its one-time code; once activated it stays so.
type Activation struct {
	Activated   bool
	ActivatedAt time.Time
	// CodeHash is the SHA-256 of a generated one-time code, hex-encoded; the code itself is
	// kept only in the file it was written to. Empty while no code was generated.
	CodeHash string
	// Version increases with every change; updates are conditional on it.
	Version int64
}

// HashCode returns the hash an activation code is kept as.
func HashCode(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// CodeMatches reports whether code is the one whose hash is want, in constant time, so
// answers take as long whatever the guess. An empty want matches nothing.
func CodeMatches(code, want string) bool {
	if want == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(HashCode(code)), []byte(want)) == 1
}

// ErrWrongActivationCode is the answer to a wrong or missing one-time code.
var ErrWrongActivationCode = apperr.Invalid(apperr.RequestInvalid, "The activation code is not valid.",
	apperr.FieldError{Field: "otc", Message: "is not this installation's activation code"})

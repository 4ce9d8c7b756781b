// Package names holds the naming rules every service shares (API.md §1): how free text
// becomes a name, and the names no resource may take.
package names

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLength bounds names.
const MaxLength = 64

// reserved names collide with fixed paths (`/team/query`, `/workflow/query`,
// `/task/validate`…) or mean something to the UI.
var reserved = map[string]bool{
	"query": true, "roles": true, "quotas": true, "validate-name": true, "home": true,
	"admin": true, "system": true, "profile": true, "connect": true,
}

// Reserved reports whether name, in any case (routing ignores case), is refused on create.
func Reserved(name string) bool { return reserved[strings.ToLower(name)] }

// Slug turns free text into a name: lower case, spaces and `_` become `-`, other
// characters are dropped, at most MaxLength characters ("My Flow" → "my-flow").
func Slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case r == ' ' || r == '_' || r == '-':
			b.WriteByte('-')
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		}
	}
	out := b.String()
	if len(out) > MaxLength {
		out = out[:MaxLength]
	}
	return out
}

// MaxLabelKeyLength bounds label keys.
const MaxLabelKeyLength = 253

// CheckLabelKey reports why key cannot be a label key, nil when it can. Label keys become
// field names in the stores' filters and documents, so what means something there is
// refused: a leading `$` (an operator) and NUL or other control characters (NUL ends a
// BSON field name). Dots stay allowed: `app.kubernetes.io/name` is a common key, and the
// stores match label keys as whole strings.
func CheckLabelKey(key string) error {
	switch {
	case key == "":
		return errors.New("a label key must not be empty")
	case len(key) > MaxLabelKeyLength:
		return fmt.Errorf("label key %.20q… is longer than %d bytes", key, MaxLabelKeyLength)
	case strings.HasPrefix(key, "$"):
		return fmt.Errorf("label key %q must not start with '$'", key)
	case strings.IndexFunc(key, unicode.IsControl) >= 0:
		return fmt.Errorf("label key %q must not contain control characters", key)
	case !utf8.ValidString(key):
		return fmt.Errorf("label key %q is not valid UTF-8", key)
	}
	return nil
}

// Package names holds the naming rules every service shares (API.md §1): how free text
// becomes a name, and the names no resource may take.
package names

import (
	"strings"
	"unicode"
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

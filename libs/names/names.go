// Package names holds the naming rules every service shares (API.md §1): how free text
// becomes a name, and the names no resource may take.
package names

import (
	"errors"
	"fmt"
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

// Bounds of label keys: a key is an optional prefix and `/` and a name, as Kubernetes
// label keys are.
const (
	// MaxLabelKeyLength bounds a whole label key: the longest prefix, `/` and the longest name.
	MaxLabelKeyLength = MaxLabelPrefixLength + 1 + MaxLabelNameLength
	// MaxLabelPrefixLength bounds a label key's prefix.
	MaxLabelPrefixLength = 253
	// MaxLabelNameLength bounds a label key's name, the part after the prefix's `/`.
	MaxLabelNameLength = 63
)

// CheckLabelKey reports why key cannot be a label key, nil when it can. Every resource
// with labels takes the keys Kubernetes takes: an optional prefix, a DNS subdomain (lower
// case letters, digits, `-` and `.`, dot-separated parts starting and ending with a letter
// or digit, at most 253 characters), then `/`, then a name of at most 63 letters, digits,
// `-`, `_` and `.`, starting and ending with a letter or digit (`env`,
// `app.kubernetes.io/name`). So no key starts with `$`, holds blanks or control characters,
// or has an empty dot-separated part in its prefix: nothing that means something in a
// store's field path or a query string gets in.
func CheckLabelKey(key string) error {
	if key == "" {
		return errors.New("a label key must not be empty")
	}
	switch {
	case len(key) > MaxLabelKeyLength:
		return fmt.Errorf("label key %.20q… is longer than %d bytes", key, MaxLabelKeyLength)
	case strings.HasPrefix(key, "$"):
		return fmt.Errorf("label key %q must not start with '$'", key)
	case strings.IndexFunc(key, unicode.IsControl) >= 0:
		return fmt.Errorf("label key %q must not contain control characters", key)
	}
	name := key
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		prefix := key[:i]
		name = key[i+1:]
		if err := checkLabelPrefix(prefix); err != nil {
			return fmt.Errorf("label key %q: %w", key, err)
		}
	}
	if err := checkLabelName(name); err != nil {
		return fmt.Errorf("label key %q: %w", key, err)
	}
	return nil
}

// checkLabelPrefix checks the part of a label key before its `/`.
func checkLabelPrefix(prefix string) error {
	if prefix == "" {
		return errors.New("the prefix before '/' must not be empty")
	}
	if len(prefix) > MaxLabelPrefixLength {
		return fmt.Errorf("the prefix before '/' is longer than %d characters", MaxLabelPrefixLength)
	}
	for _, part := range strings.Split(prefix, ".") {
		if part == "" {
			return errors.New("the prefix before '/' must be a DNS subdomain, without empty parts between its dots")
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return errors.New("the prefix before '/' must be a DNS subdomain: lower case letters, digits, '-' and '.'")
			}
		}
		if part[0] == '-' || part[len(part)-1] == '-' {
			return errors.New("each part of the prefix before '/' must start and end with a letter or digit")
		}
	}
	return nil
}

// checkLabelName checks a label key's name, the part after its prefix's `/`.
func checkLabelName(name string) error {
	if name == "" {
		return errors.New("the name must not be empty")
	}
	if len(name) > MaxLabelNameLength {
		return fmt.Errorf("the name is longer than %d characters", MaxLabelNameLength)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(isAlnum(c) || c == '-' || c == '_' || c == '.') {
			return errors.New("the name may hold only letters, digits, '-', '_' and '.' (and one '/' after a prefix)")
		}
	}
	if !isAlnum(name[0]) || !isAlnum(name[len(name)-1]) {
		return errors.New("the name must start and end with a letter or digit")
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

package domain

import (
	"fmt"
	"strings"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/names"
)

// MaxNameLength bounds slugs (API.md §1).
const MaxNameLength = names.MaxLength

// Slug turns free text into a name ("My Flow" → "my-flow"); see names.Slug.
func Slug(s string) string { return names.Slug(s) }

// IsSlug reports whether name is already a slug, as names in paths must be.
func IsSlug(name string) bool { return name != "" && Slug(name) == name }

// NewName validates a requested name for a new workflow or template and returns its slug.
func NewName(requested string) (string, error) {
	name := Slug(requested)
	if name == "" {
		return "", apperr.Invalid(apperr.WorkflowInvalidReq, "A name is required: it must contain letters or digits.",
			apperr.FieldError{Field: "name", Message: "must contain letters or digits"})
	}
	if names.Reserved(name) {
		return "", apperr.Invalid(apperr.WorkflowInvalidReq, fmt.Sprintf("The name '%s' is reserved.", name),
			apperr.FieldError{Field: "name", Message: "is reserved"})
	}
	return name, nil
}

// SameName checks a body's name against the path's: names never change, so a body naming
// another workflow is refused. An empty body name means the path's.
func SameName(pathName, bodyName string) error {
	if bodyName == "" || Slug(bodyName) == pathName {
		return nil
	}
	return apperr.Invalid(apperr.WorkflowInvalidReq,
		fmt.Sprintf("The body names '%s' but the path names '%s'; names cannot change.", bodyName, pathName),
		apperr.FieldError{Field: "name", Message: "differs from the path"})
}

// CopyName is the n-th candidate name for a duplicate of name: `<name>-copy`, then
// `<name>-copy-2`, … cut so that the suffix always fits in MaxNameLength.
func CopyName(name string, n int) string {
	suffix := "-copy"
	if n > 1 {
		suffix = fmt.Sprintf("-copy-%d", n)
	}
	if len(name)+len(suffix) > MaxNameLength {
		name = strings.TrimRight(name[:MaxNameLength-len(suffix)], "-")
	}
	return name + suffix
}

package domain

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/baton-flow/baton/libs/paramref"
)

// Ref is one well-formed reference found in a value.
type Ref struct {
	// Prefix is one of paramref's prefixes.
	Prefix string
	// Path is what follows the prefix: a parameter path, or for paramref.Tasks the result name.
	Path string
	// Task is the upstream task of a paramref.Tasks reference.
	Task string
}

// paramPath is a dotted name with optional bracket parts: data.repo, data["a.b"], list[0].
var paramPath = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+|\["[^"]*"\]|\['[^']*'\]|\[[0-9]+\])*$`)

// FindRefs returns the references in s with a known prefix, and a message for each that is
// malformed.
func FindRefs(s string) (refs []Ref, problems []string) {
	for i := 0; ; {
		j := strings.Index(s[i:], "$(")
		if j < 0 {
			return refs, problems
		}
		start := i + j + 2
		// Scanning resumes inside the parentheses: `$(echo $(params.x))` holds a reference.
		i = start
		prefix := paramref.Prefix(s[start:])
		if prefix == "" {
			continue
		}
		end := paramref.Close(s, start)
		if end < 0 {
			problems = append(problems, fmt.Sprintf("reference '$(%s' is not closed", clip(s[start:])))
			continue
		}
		ref, problem := parseRef(prefix, s[start:end])
		if problem != "" {
			problems = append(problems, problem)
			continue
		}
		refs = append(refs, ref)
	}
}

func parseRef(prefix, body string) (Ref, string) {
	rest := strings.TrimPrefix(body, prefix)
	bad := func(want string) (Ref, string) {
		return Ref{}, fmt.Sprintf("reference '$(%s)' is malformed: want %s", body, want)
	}
	switch prefix {
	case paramref.Tasks:
		task, result, ok := strings.Cut(rest, ".results.")
		if !ok || task == "" || !paramPath.MatchString(result) {
			return bad("$(tasks.<task>.results.<result>)")
		}
		return Ref{Prefix: prefix, Task: task, Path: result}, ""
	case paramref.Results:
		if !paramPath.MatchString(rest) {
			return bad("$(results.<name>.path)")
		}
	case paramref.ContextParams:
		if !slices.Contains(paramref.ContextNames, rest) {
			return Ref{}, fmt.Sprintf("reference '$(%s)' names no context parameter: want one of %s",
				body, strings.Join(paramref.ContextNames, ", "))
		}
	default:
		if !paramPath.MatchString(rest) {
			return bad("$(" + prefix + "<name>)")
		}
	}
	return Ref{Prefix: prefix, Path: rest}, ""
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

package domain

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Parameter references are `$(…)` with one of these prefixes (API.md §5). Anything else
// inside `$(…)`, such as `$(date)`, belongs to the shell and is left alone.
const (
	RefParams         = "params."
	RefGlobalParams   = "global.params."
	RefTeamParams     = "team.params."
	RefWorkflowParams = "workflow.params."
	RefContextParams  = "context.params."
	RefTasks          = "tasks."
	RefResults        = "results."
)

// refPrefixes are tried longest first, so "global.params." is not read as "params.".
var refPrefixes = []string{
	RefGlobalParams, RefTeamParams, RefWorkflowParams, RefContextParams, RefParams, RefTasks, RefResults,
}

// ContextParams are the names `$(context.params.<name>)` may use.
var ContextParams = []string{
	"workflowrun-ref", "workflowrun-trigger", "workflowrun-initiator", "workflow-name",
	"workflow-displayname", "workflow-ref", "workflow-version", "taskrun-ref", "taskrun-name",
	"taskrun-type", "webhook-url", "event-url", "callback-url", "wfe-url", "callback-token",
}

// Ref is one well-formed reference found in a value.
type Ref struct {
	// Prefix is one of the Ref* constants.
	Prefix string
	// Path is what follows the prefix: a parameter path, or for RefTasks the result name.
	Path string
	// Task is the upstream task of a RefTasks reference.
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
		prefix := knownPrefix(s[start:])
		if prefix == "" {
			continue
		}
		end := closingParen(s, start)
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

func knownPrefix(s string) string {
	for _, p := range refPrefixes {
		if strings.HasPrefix(s, p) {
			return p
		}
	}
	return ""
}

// closingParen returns the index of the `)` closing a reference whose content starts at
// start, skipping quoted bracket parts, or -1.
func closingParen(s string, start int) int {
	var quote byte
	for k := start; k < len(s); k++ {
		c := s[k]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ')':
			return k
		}
	}
	return -1
}

func parseRef(prefix, body string) (Ref, string) {
	rest := strings.TrimPrefix(body, prefix)
	bad := func(want string) (Ref, string) {
		return Ref{}, fmt.Sprintf("reference '$(%s)' is malformed: want %s", body, want)
	}
	switch prefix {
	case RefTasks:
		task, result, ok := strings.Cut(rest, ".results.")
		if !ok || task == "" || !paramPath.MatchString(result) {
			return bad("$(tasks.<task>.results.<result>)")
		}
		return Ref{Prefix: prefix, Task: task, Path: result}, ""
	case RefResults:
		if !paramPath.MatchString(rest) {
			return bad("$(results.<name>.path)")
		}
	case RefContextParams:
		if !slices.Contains(ContextParams, rest) {
			return Ref{}, fmt.Sprintf("reference '$(%s)' names no context parameter: want one of %s",
				body, strings.Join(ContextParams, ", "))
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

// Package paramref holds the grammar of parameter references, `$(…)` (API.md §5), shared
// by the workflows service, which checks them when a workflow is saved, and the runs
// service, which resolves them. Anything else inside `$(…)`, such as `$(date)`, belongs
// to the shell and is left alone.
package paramref

import "strings"

// The prefixes of references.
const (
	Params         = "params."
	GlobalParams   = "global.params."
	TeamParams     = "team.params."
	WorkflowParams = "workflow.params."
	ContextParams  = "context.params."
	Tasks          = "tasks."
	Results        = "results."
)

// prefixes are tried longest first, so "global.params." is not read as "params.".
var prefixes = []string{GlobalParams, TeamParams, WorkflowParams, ContextParams, Params, Tasks, Results}

// ContextNames are the names `$(context.params.<name>)` may use. `wfe-url` is v4's name
// for `callback-url`; either resolves to whichever of the two a run holds.
var ContextNames = []string{
	"workflowrun-ref", "workflowrun-trigger", "workflowrun-initiator", "workflow-name",
	"workflow-displayname", "workflow-ref", "workflow-version", "taskrun-ref", "taskrun-name",
	"taskrun-type", "webhook-url", "event-url", "callback-url", "wfe-url", "callback-token",
}

// Prefix returns the reference prefix s starts with, or "" for none.
func Prefix(s string) string {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return p
		}
	}
	return ""
}

// Close returns the index of the `)` closing a reference whose content starts at start,
// skipping quoted bracket parts (`$(params.m["a)b"])`), or -1.
func Close(s string, start int) int {
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

// Package workflowid gives workflows and templates the `id` that v4 clients address them
// by (API.md §1, "IDs"). Baton names a workflow by its team and name, which never change,
// so the id is derived from them rather than stored: every service can read one without
// asking the workflows service, and a workflow has the same id for as long as its name
// exists. Clients treat it as opaque.
//
// An id is "wf_" and the unpadded base64url encoding of `<team>/<name>` (a template:
// `<name>`). Names are slugs and never hold '_', so an id is never mistaken for a name.
package workflowid

import (
	"encoding/base64"
	"strings"
)

// prefix starts every id.
const prefix = "wf_"

var enc = base64.RawURLEncoding

// Of returns the id of team's workflow called name; with team "" the template's.
func Of(team, name string) string {
	if name == "" {
		return ""
	}
	if team == "" {
		return prefix + enc.EncodeToString([]byte(name))
	}
	return prefix + enc.EncodeToString([]byte(team+"/"+name))
}

// Parse returns the team ("" for a template) and name an id stands for; ok is false when
// s is not an id.
func Parse(s string) (team, name string, ok bool) {
	rest, found := strings.CutPrefix(s, prefix)
	if !found || rest == "" {
		return "", "", false
	}
	raw, err := enc.DecodeString(rest)
	if err != nil {
		return "", "", false
	}
	team, name, found = strings.Cut(string(raw), "/")
	if !found {
		team, name = "", team
	}
	if name == "" || strings.Contains(name, "/") {
		return "", "", false
	}
	return team, name, true
}

// Resolve returns the name that ref, as a client sent it in team's paths or filters,
// stands for: the name of an id of that team's workflow (or, for team "", of a
// template), the name of `<team>/<name>` in that team, and ref itself otherwise. An id or
// reference of another team is returned unchanged: no workflow has that name, so it is
// answered as not found and matches nothing.
func Resolve(team, ref string) string {
	if t, name, ok := Parse(ref); ok {
		if t == team {
			return name
		}
		return ref
	}
	if team != "" {
		if t, name, ok := strings.Cut(ref, "/"); ok && t == team && name != "" {
			return name
		}
	}
	return ref
}

// ResolveAll resolves each ref of a filter list in place and returns it.
func ResolveAll(team string, refs []string) []string {
	for i, r := range refs {
		refs[i] = Resolve(team, r)
	}
	return refs
}

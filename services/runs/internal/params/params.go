// Package params resolves parameter references, `$(params.x)` and the like, in what a task
// runs (API.md §5), and holds the size limits of run values (API.md §8).
//
// The grammar is the one the workflows service validates when a workflow is saved: a
// reference is `$(…)` with a known prefix; anything else inside `$(…)`, such as `$(date)`,
// belongs to the shell and is left alone, and scanning goes on inside it, so
// `$(echo $(params.x))` resolves the inner reference. Resolution is a single pass: a value
// substituted in is never scanned again, so a parameter value cannot inject references.
package params

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/baton-flow/baton/libs/paramref"
)

// Limits on run values (API.md §8).
const (
	// MaxResultBytes bounds one task result.
	MaxResultBytes = 64 << 10
	// MaxRunValuesBytes bounds a run's params and results together, counted with Size.
	MaxRunValuesBytes = 1 << 20
)

// Size is the length in bytes of v encoded as compact JSON (a string counts its quotes). A
// value that cannot be encoded counts as math.MaxInt, so that it trips any limit.
func Size(v any) int {
	var n counter
	if err := compactJSON(&n, v); err != nil {
		return math.MaxInt
	}
	return int(n) - 1 // the encoder ends with a newline
}

type counter int

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}

// Scope holds the values a task's references resolve against. Nil maps are empty layers.
type Scope struct {
	// Global holds the global parameters.
	Global map[string]any
	// Team holds the parameters of the run's team.
	Team map[string]any
	// Run holds the run's parameters: the workflow's defaults merged with those submitted.
	// `$(workflow.params.x)` reads this layer alone.
	Run map[string]any
	// Task holds the task's own parameters, already resolved: see WithTask.
	Task map[string]any
	// Context holds the context parameters by name (paramref.ContextNames). The engine
	// sets every name that applies; a reference to one it left out cannot be resolved.
	Context map[string]string
	// Results holds the results of finished tasks: task name → result name → value.
	Results map[string]map[string]string
	// Secret marks the values of each layer that came from a password parameter.
	Secret Secret
}

// Secret names, layer by layer, the values that came from a password parameter, directly
// or through a task that passed one on. A string or value into which any of them is
// substituted is secret as a whole: see StringSecret and ValueSecret.
type Secret struct {
	Global, Team, Run, Task map[string]bool
	// Results maps a task's name to its secret results.
	Results map[string]map[string]bool
}

// WithTask resolves a task's own parameters against the other layers (sc.Task is ignored,
// so a task parameter may refer to a run parameter of the same name but not to another task
// parameter) and returns sc with them as its Task layer, for resolving the task's spec.
func (sc Scope) WithTask(params map[string]any) (Scope, error) {
	outer := sc
	outer.Task = nil
	outer.Secret.Task = nil
	task := make(map[string]any, len(params))
	secret := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		v, sec, err := outer.ValueSecret(params[name])
		if err != nil {
			return Scope{}, fmt.Errorf("parameter %s: %w", name, err)
		}
		task[name] = v
		if sec {
			secret[name] = true
		}
	}
	sc.Task, sc.Secret.Task = task, secret
	return sc, nil
}

// String replaces the references in s by their values: strings as they are, null as
// nothing, other values as compact JSON (numbers as written, 42.0 as "42").
// `$(results.<name>.path)` is left for the runner, which substitutes the result file's path.
// The error, for the first reference that is malformed or cannot be resolved, is a
// *MalformedError or an *UnresolvedError naming it.
func (sc Scope) String(s string) (string, error) {
	var secret bool
	return sc.str(s, &secret)
}

// StringSecret is String, and also reports whether a value marked in sc.Secret was
// substituted into s.
func (sc Scope) StringSecret(s string) (string, bool, error) {
	var secret bool
	out, err := sc.str(s, &secret)
	return out, secret, err
}

// str is String, setting *secret when it substitutes a secret value.
func (sc Scope) str(s string, secret *bool) (string, error) {
	if !strings.Contains(s, "$(") {
		return s, nil
	}
	var b strings.Builder
	last := 0
	for i := 0; ; {
		f, ok := next(s, i)
		if !ok {
			break
		}
		if f.err != nil {
			return "", f.err
		}
		i = f.end
		if f.ref.Prefix == paramref.Results {
			continue
		}
		v, sec, err := sc.resolve(f.ref)
		if err != nil {
			return "", err
		}
		*secret = *secret || sec
		if last == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:f.start])
		b.WriteString(interpolate(v))
		last = f.end
	}
	if last == 0 {
		return s, nil
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// Value resolves the references in a JSON value (as decoded into any), returning a new value
// and leaving v unchanged. Every string inside objects and arrays is resolved; a string that
// is exactly one reference, such as "$(params.data)", becomes the referenced value with its
// own type (object, array, number, boolean, null); references in longer strings interpolate
// as String does. Object keys are not resolved. map[string]string and []string keep their
// type, their strings resolved by String. Errors are as String's.
func (sc Scope) Value(v any) (any, error) {
	var secret bool
	return sc.value(v, &secret)
}

// ValueSecret is Value, and also reports whether a value marked in sc.Secret was
// substituted anywhere in v.
func (sc Scope) ValueSecret(v any) (any, bool, error) {
	var secret bool
	out, err := sc.value(v, &secret)
	return out, secret, err
}

// value is Value, setting *secret when it substitutes a secret value.
func (sc Scope) value(v any, secret *bool) (any, error) {
	switch c := v.(type) {
	case string:
		return sc.exact(c, secret)
	case map[string]any:
		out := make(map[string]any, len(c))
		// Sorted, so that of several bad references the same one is reported every time.
		for _, k := range slices.Sorted(maps.Keys(c)) {
			r, err := sc.value(c[k], secret)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(c))
		for i, e := range c {
			r, err := sc.value(e, secret)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]string:
		out := make(map[string]string, len(c))
		for _, k := range slices.Sorted(maps.Keys(c)) {
			r, err := sc.str(c[k], secret)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []string:
		out := make([]string, len(c))
		for i, e := range c {
			r, err := sc.str(e, secret)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	default:
		return v, nil
	}
}

// exact resolves a string that is exactly one reference to the referenced value; any other
// string goes through String.
func (sc Scope) exact(s string, secret *bool) (any, error) {
	if strings.HasPrefix(s, "$(") {
		if f, ok := next(s, 0); ok && f.start == 0 && f.end == len(s) {
			if f.err != nil {
				return nil, f.err
			}
			if f.ref.Prefix == paramref.Results {
				return s, nil
			}
			v, sec, err := sc.resolve(f.ref)
			if err != nil {
				return nil, err
			}
			*secret = *secret || sec
			return clone(v), nil
		}
	}
	return sc.str(s, secret)
}

// Ref is one well-formed reference with a known prefix.
type Ref struct {
	// Text is the reference as written, `$(` to `)`.
	Text string
	// Prefix is one of paramref's prefixes.
	Prefix string
	// Task is the upstream task of a paramref.Tasks reference.
	Task string
	// Name is the parameter, context parameter or result name.
	Name string
	// Path is what follows Name as written, such as `.repo.name` or `["a.b"][0]`; for
	// paramref.Results it is `.path`.
	Path string
}

// Refs lists the well-formed references with a known prefix in s, in order, skipping
// malformed ones (String reports those). It includes `$(results.<name>.path)`; a caller
// wanting the upstream results a task needs keeps those with Prefix paramref.Tasks.
func Refs(s string) []Ref {
	var out []Ref
	for i := 0; ; {
		f, ok := next(s, i)
		if !ok {
			return out
		}
		if f.err != nil {
			i = f.start + 2
			continue
		}
		out = append(out, f.ref.Ref)
		i = f.end
	}
}

// ValueRefs lists the references of Refs in every string of a JSON value, object members in
// key order.
func ValueRefs(v any) []Ref {
	switch c := v.(type) {
	case string:
		return Refs(c)
	case map[string]any:
		var out []Ref
		for _, k := range slices.Sorted(maps.Keys(c)) {
			out = append(out, ValueRefs(c[k])...)
		}
		return out
	case []any:
		var out []Ref
		for _, e := range c {
			out = append(out, ValueRefs(e)...)
		}
		return out
	case map[string]string:
		var out []Ref
		for _, k := range slices.Sorted(maps.Keys(c)) {
			out = append(out, Refs(c[k])...)
		}
		return out
	case []string:
		var out []Ref
		for _, e := range c {
			out = append(out, Refs(e)...)
		}
		return out
	default:
		return nil
	}
}

// UnresolvedError is a well-formed reference with no value in the scope: a missing
// parameter, key, index, task or result. The engine fails the task `invalid` with its
// message.
type UnresolvedError struct {
	// Ref is the reference as written (long ones clipped).
	Ref string
	// Reason says what is missing.
	Reason string
}

func (e *UnresolvedError) Error() string {
	return fmt.Sprintf("reference '%s' cannot be resolved: %s", e.Ref, e.Reason)
}

// MalformedError is a reference with a known prefix that does not follow the grammar, or
// is not closed.
type MalformedError struct {
	// Ref is the reference as written (long ones clipped).
	Ref string
	// Reason says what is wrong.
	Reason string
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("reference '%s' is malformed: %s", e.Ref, e.Reason)
}

// reference is a parsed Ref with the steps of its path.
type reference struct {
	Ref
	steps []step
}

// found is one `$(…)` with a known prefix: s[start:end] from `$(` to `)`.
type found struct {
	start, end int
	ref        reference
	err        error
}

// next finds the first `$(…)` with a known prefix at or after i. Scanning goes on inside
// any other `$(`. An unclosed reference runs to the end of s.
func next(s string, i int) (found, bool) {
	for {
		j := strings.Index(s[i:], "$(")
		if j < 0 {
			return found{}, false
		}
		start := i + j
		body := start + 2
		prefix := paramref.Prefix(s[body:])
		if prefix == "" {
			i = body
			continue
		}
		end := paramref.Close(s, body)
		if end < 0 {
			return found{start: start, end: len(s), err: &MalformedError{Ref: clip(s[start:]), Reason: "no closing ')'"}}, true
		}
		ref, err := parseRef(prefix, s[start:end+1], s[body:end])
		return found{start: start, end: end + 1, ref: ref, err: err}, true
	}
}

func parseRef(prefix, text, body string) (reference, error) {
	rest := body[len(prefix):]
	bad := func(reason string) (reference, error) {
		return reference{}, &MalformedError{Ref: clip(text), Reason: reason}
	}
	r := reference{Ref: Ref{Text: text, Prefix: prefix}}
	switch prefix {
	case paramref.Tasks:
		task, result, ok := strings.Cut(rest, ".results.")
		if !ok || task == "" {
			return bad("want $(tasks.<task>.results.<result>)")
		}
		name, steps, ok := parsePath(result)
		if !ok {
			return bad(`want $(tasks.<task>.results.<result>), optionally followed by .key, ["key"] or [index]`)
		}
		r.Task, r.Name, r.Path, r.steps = task, name, result[len(name):], steps
	case paramref.Results:
		name := rest[:nameLen(rest)]
		if name == "" || rest[len(name):] != ".path" {
			return bad("want $(results.<name>.path)")
		}
		r.Name, r.Path = name, ".path"
	case paramref.ContextParams:
		if !slices.Contains(paramref.ContextNames, rest) {
			return bad("want one of " + strings.Join(paramref.ContextNames, ", "))
		}
		r.Name = rest
	default:
		name, steps, ok := parsePath(rest)
		if !ok {
			return bad(`want $(` + prefix + `<name>), optionally followed by .key, ["key"] or [index]`)
		}
		r.Name, r.Path, r.steps = name, rest[len(name):], steps
	}
	return r, nil
}

// resolve finds the value of a well-formed reference other than paramref.Results, and
// whether it is secret.
func (sc Scope) resolve(r reference) (any, bool, error) {
	unresolved := func(format string, args ...any) error {
		return &UnresolvedError{Ref: clip(r.Text), Reason: fmt.Sprintf(format, args...)}
	}
	var v any
	var secret bool
	switch r.Prefix {
	case paramref.Params:
		var ok bool
		if v, secret, ok = sc.param(r.Name); !ok {
			return nil, false, unresolved("no parameter %q", r.Name)
		}
	case paramref.GlobalParams, paramref.TeamParams, paramref.WorkflowParams:
		layer, secrets, label := sc.Global, sc.Secret.Global, "global"
		if r.Prefix == paramref.TeamParams {
			layer, secrets, label = sc.Team, sc.Secret.Team, "team"
		} else if r.Prefix == paramref.WorkflowParams {
			layer, secrets, label = sc.Run, sc.Secret.Run, "workflow"
		}
		var ok bool
		if v, ok = layer[r.Name]; !ok {
			return nil, false, unresolved("no %s parameter %q", label, r.Name)
		}
		secret = secrets[r.Name]
	case paramref.ContextParams:
		s, ok := sc.context(r.Name)
		if !ok {
			return nil, false, unresolved("context parameter %q is not set", r.Name)
		}
		return s, false, nil
	case paramref.Tasks:
		results, ok := sc.Results[r.Task]
		if !ok {
			return nil, false, unresolved("no results from task %q", r.Task)
		}
		if v, ok = results[r.Name]; !ok {
			return nil, false, unresolved("task %q has no result %q", r.Task, r.Name)
		}
		secret = sc.Secret.Results[r.Task][r.Name]
	default:
		return nil, false, unresolved("prefix %q is not resolved here", r.Prefix)
	}
	v, reason := walk(v, r.Name, r.steps)
	if reason != "" {
		return nil, false, unresolved("%s", reason)
	}
	return v, secret, nil
}

// param searches the layers of `$(params.x)`, the later winning: global, team, run, task,
// context. It reports whether the value found is secret.
func (sc Scope) param(name string) (any, bool, bool) {
	if s, ok := sc.context(name); ok {
		return s, false, true
	}
	layers := [...]map[string]any{sc.Task, sc.Run, sc.Team, sc.Global}
	secrets := [...]map[string]bool{sc.Secret.Task, sc.Secret.Run, sc.Secret.Team, sc.Secret.Global}
	for i, layer := range layers {
		if v, ok := layer[name]; ok {
			return v, secrets[i][name], true
		}
	}
	return nil, false, false
}

func (sc Scope) context(name string) (string, bool) {
	if s, ok := sc.Context[name]; ok {
		return s, true
	}
	alias := ""
	switch name {
	case "wfe-url":
		alias = "callback-url"
	case "callback-url":
		alias = "wfe-url"
	default:
		return "", false
	}
	s, ok := sc.Context[alias]
	return s, ok
}

// clip shortens a reference quoted in a message; an unclosed one runs to the end of its
// string.
func clip(s string) string {
	const limit = 80
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Package domain holds the integrations service's rules, free of transport and storage:
// when a trigger's conditions hold on an incoming payload, and the records the service
// keeps of installations, links and deliveries.
package domain

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/theory/jsonpath"
)

// Operations a trigger condition may use (API.md §3).
const (
	OpEquals  = "equals"
	OpMatches = "matches"
	OpIn      = "in"
)

// Condition must hold on an incoming payload for a trigger to start a run: Field is a
// JSONPath (RFC 9535; a path without the leading `$` is read from the root), and at least
// one value it selects must equal Value, fully match the RE2 pattern Value, or be one of
// Values. A scalar compares by its JSON text (`true`, `42`, a string as itself); an object
// or a list by its compact JSON.
type Condition struct {
	Field     string
	Operation string
	Value     string
	Values    []string
}

// Unmet says which condition did not hold, and why, for the caller's answer.
type Unmet struct {
	Index  int
	Reason string
}

func (u *Unmet) Error() string { return fmt.Sprintf("condition %d %s", u.Index+1, u.Reason) }

// Holds reports whether every condition holds on doc, a payload decoded from JSON (with
// json.Number or float64 numbers); the first that does not is returned as *Unmet. No
// conditions hold on anything.
func Holds(conds []Condition, doc any) error {
	for i, c := range conds {
		ok, reason := c.holds(doc)
		if !ok {
			return &Unmet{Index: i, Reason: reason}
		}
	}
	return nil
}

func (c Condition) holds(doc any) (bool, string) {
	path, err := compilePath(c.Field)
	if err != nil {
		return false, fmt.Sprintf("has a field that is not a JSONPath (%q): %v", c.Field, err)
	}
	var match func(string) bool
	switch c.Operation {
	case OpEquals, "":
		match = func(s string) bool { return s == c.Value }
	case OpIn:
		match = func(s string) bool { return slices.Contains(c.Values, s) }
	case OpMatches:
		re, err := compileFull(c.Value)
		if err != nil {
			return false, fmt.Sprintf("has a pattern that is not RE2 (%q): %v", c.Value, err)
		}
		match = re.MatchString
	default:
		return false, fmt.Sprintf("has an unknown operation %q (equals, matches or in)", c.Operation)
	}
	nodes := path.Select(doc)
	for _, n := range nodes {
		if match(text(n)) {
			return true, ""
		}
	}
	if len(nodes) == 0 {
		return false, fmt.Sprintf("(%s %s) selects nothing", c.Field, c.Operation)
	}
	return false, fmt.Sprintf("(%s %s) does not hold", c.Field, c.Operation)
}

// text is how a selected value compares.
func text(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// Compiled paths and patterns are kept: the same few conditions are checked for every
// event a workflow gets. The caches are emptied when they grow past maxCached, so
// conditions of workflows long gone do not stay.
const maxCached = 4096

type cache[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

func (c *cache[T]) get(key string, make func(string) (T, error)) (T, error) {
	c.mu.Lock()
	v, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := make(key)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = map[string]T{}
	}
	c.m[key] = v
	c.mu.Unlock()
	return v, nil
}

var (
	paths    cache[*jsonpath.Path]
	patterns cache[*regexp.Regexp]
)

func compilePath(field string) (*jsonpath.Path, error) {
	return paths.get(field, func(f string) (*jsonpath.Path, error) {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
			return nil, fmt.Errorf("empty")
		case !strings.HasPrefix(f, "$"):
			// v4 designers often write `ref` or `.ref` for `$.ref`.
			f = "$." + strings.TrimPrefix(f, ".")
		}
		return jsonpath.Parse(f)
	})
}

func compileFull(pattern string) (*regexp.Regexp, error) {
	return patterns.get(pattern, func(p string) (*regexp.Regexp, error) { return regexp.Compile(`^(?:` + p + `)$`) })
}

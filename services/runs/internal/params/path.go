package params

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/baton-flow/baton/libs/jsonbody"
)

// step is one element of a path after the name: `.key`, `["key"]`, `['key']` or `[0]`.
type step struct {
	key string
	// index is the step as an array index, or -1 when it is not a number.
	index int
	// at is the path up to and including this step, as written, for messages.
	at string
}

// parsePath reads `name(.seg | ["key"] | ['key'] | [digits])*`, the grammar the workflows
// service validates at save time.
func parsePath(p string) (name string, steps []step, ok bool) {
	n := nameLen(p)
	if n == 0 {
		return "", nil, false
	}
	name = p[:n]
	for i := n; i < len(p); {
		var st step
		switch {
		case p[i] == '.':
			k := nameLen(p[i+1:])
			if k == 0 {
				return "", nil, false
			}
			st = keyStep(p[i+1 : i+1+k])
			i += 1 + k
		case p[i] == '[' && i+1 < len(p) && (p[i+1] == '"' || p[i+1] == '\''):
			end := strings.IndexByte(p[i+2:], p[i+1])
			if end < 0 || i+2+end+1 >= len(p) || p[i+2+end+1] != ']' {
				return "", nil, false
			}
			// A quoted key is always a key, never an index: data["0"] reads key "0".
			st = step{key: p[i+2 : i+2+end], index: -1}
			i += 2 + end + 2
		case p[i] == '[':
			end := strings.IndexByte(p[i+1:], ']')
			if end <= 0 || !isDigits(p[i+1:i+1+end]) {
				return "", nil, false
			}
			st = keyStep(p[i+1 : i+1+end])
			i += 1 + end + 1
		default:
			return "", nil, false
		}
		st.at = p[:i]
		steps = append(steps, st)
	}
	return name, steps, true
}

// keyStep makes a step from an unquoted segment; digits also serve as an array index, so
// list.0 and list[0] read the same element.
func keyStep(seg string) step {
	st := step{key: seg, index: -1}
	if isDigits(seg) {
		if n, err := strconv.Atoi(seg); err == nil {
			st.index = n
		} else {
			st.index = int(^uint(0) >> 1) // out of any range
		}
	}
	return st
}

func nameLen(s string) int {
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return i
		}
	}
	return len(s)
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// walk follows steps from v, which was found under name. A string met on the way that holds
// a JSON object or array is parsed first: results and some params arrive as JSON text. On
// failure it returns a reason naming where the walk stopped.
func walk(v any, name string, steps []step) (any, string) {
	at := name
	for _, st := range steps {
		if s, ok := v.(string); ok {
			if parsed, ok := parseJSONText(s); ok {
				v = parsed
			}
		}
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[st.key]
			if !ok {
				return nil, fmt.Sprintf("%s has no key %q", at, st.key)
			}
			v = next
		case map[string]string:
			next, ok := c[st.key]
			if !ok {
				return nil, fmt.Sprintf("%s has no key %q", at, st.key)
			}
			v = next
		case []any:
			i, reason := index(st, at, len(c))
			if reason != "" {
				return nil, reason
			}
			v = c[i]
		case []string:
			i, reason := index(st, at, len(c))
			if reason != "" {
				return nil, reason
			}
			v = c[i]
		default:
			return nil, fmt.Sprintf("%s is %s, not an object or array", at, kind(v))
		}
		at = st.at
	}
	return v, ""
}

func index(st step, at string, n int) (int, string) {
	if st.index < 0 {
		return 0, fmt.Sprintf("%s is an array: %q is not an index", at, st.key)
	}
	if st.index >= n {
		return 0, fmt.Sprintf("%s has no index %s (length %d)", at, st.key, n)
	}
	return st.index, ""
}

// parseJSONText parses s when it holds exactly one JSON object or array. Numbers stay
// json.Number so that they interpolate as written.
func parseJSONText(s string) (any, bool) {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return nil, false
	}
	var v any
	if jsonbody.DecodeNumbers([]byte(t), &v) != nil {
		return nil, false
	}
	return v, true
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "a number"
	default:
		return fmt.Sprintf("a %T", v)
	}
}

// compactJSON encodes v without HTML escaping: `<`, `>` and `&` reach a script as written.
func compactJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// interpolate renders a value substituted into a longer string: strings as they are, null as
// nothing, anything else as compact JSON (json.Number as written, 42.0 as "42").
func interpolate(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	var b bytes.Buffer
	if err := compactJSON(&b, v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// clone copies the containers of a JSON value, so a caller changing what Value returns does
// not change the scope.
func clone(v any) any {
	switch c := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(c))
		for k, e := range c {
			out[k] = clone(e)
		}
		return out
	case []any:
		out := make([]any, len(c))
		for i, e := range c {
			out[i] = clone(e)
		}
		return out
	case map[string]string:
		return maps.Clone(c)
	case []string:
		return slices.Clone(c)
	default:
		return v
	}
}

package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Extra holds the members of a JSON object that its Go type does not know. API.md §1 has
// unknown fields of workflows, their tasks and canvas data kept and echoed: designers store
// their own extras there.
type Extra map[string]json.RawMessage

// knownFields lists the JSON member names of a struct type, lower-cased: encoding/json
// matches member names to fields regardless of case, so "Name" fills Name and is not an
// unknown field either.
func knownFields(v any, also ...string) map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[strings.ToLower(name)] = true
		}
	}
	for _, a := range also {
		out[strings.ToLower(a)] = true
	}
	return out
}

// splitExtra returns the members of the JSON object data that known does not name.
func splitExtra(data []byte, known map[string]bool) (Extra, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	var extra Extra
	for k, v := range all {
		if known[strings.ToLower(k)] {
			continue
		}
		if extra == nil {
			extra = Extra{}
		}
		extra[k] = v
	}
	return extra, nil
}

// withExtra appends extra's members, in name order so output is stable, to the encoded
// JSON object obj.
func withExtra(obj []byte, extra Extra) ([]byte, error) {
	if len(extra) == 0 {
		return obj, nil
	}
	obj = bytes.TrimRight(obj, " \n")
	if len(obj) < 2 || obj[len(obj)-1] != '}' {
		return nil, fmt.Errorf("not a JSON object: %.20s", obj)
	}
	var b bytes.Buffer
	b.Grow(len(obj) + 64*len(extra))
	b.Write(obj[:len(obj)-1])
	first := len(obj) == 2
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !first {
			b.WriteByte(',')
		}
		first = false
		name, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		v := extra[k]
		if len(v) == 0 {
			v = json.RawMessage("null")
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Clone returns a copy of e that shares no map with it.
func (e Extra) Clone() Extra {
	if e == nil {
		return nil
	}
	out := make(Extra, len(e))
	for k, v := range e {
		out[k] = v
	}
	return out
}

// present reports whether a raw JSON value is there at all: absent and null are not.
func present(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && !bytes.Equal(v, []byte("null"))
}

// nonEmpty reports whether a raw JSON value holds something: not absent, null or "".
func nonEmpty(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return present(v) && !bytes.Equal(v, []byte(`""`))
}

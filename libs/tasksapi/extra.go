package tasksapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
)

// jsonKeys lists the lower-cased JSON names of a struct's fields: encoding/json matches
// names regardless of case, so a member is known when it matches one in any case.
func jsonKeys(v any) []string {
	var keys []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys = append(keys, strings.ToLower(name))
		}
	}
	return keys
}

// withExtra encodes known, then appends extra's members in name order, so the output is
// stable. An empty value is written as null.
func withExtra(known any, extra map[string]json.RawMessage) ([]byte, error) {
	base, err := json.Marshal(known)
	if err != nil || len(extra) == 0 {
		return base, err
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.Grow(len(base) + 64*len(extra))
	b.Write(base[:len(base)-1])
	for i, k := range keys {
		if i > 0 || len(base) > 2 {
			b.WriteByte(',')
		}
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

// withoutExtra decodes b into known and keeps the members keys does not name in extra.
func withoutExtra(b []byte, known any, extra *map[string]json.RawMessage, keys []string) error {
	if err := json.Unmarshal(b, known); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	*extra = nil
	for k, v := range all {
		if slices.Contains(keys, strings.ToLower(k)) {
			continue
		}
		if *extra == nil {
			*extra = map[string]json.RawMessage{}
		}
		(*extra)[k] = v
	}
	return nil
}

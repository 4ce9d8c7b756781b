// Package jsonextra reads and writes JSON objects whose Go struct does not name every
// member: the members it names fill the struct's fields, the others are kept in a map (a
// type's Extra) and written back after the known ones, in name order, so that a document
// read and written again loses nothing and its bytes do not depend on map order.
//
// A type uses it from its JSON methods through a twin type without them, whose encoding
// is the standard one:
//
//	type plainTask Task
//
//	var taskKeys = jsonextra.Keys(plainTask{})
//
//	func (t Task) MarshalJSON() ([]byte, error) { return jsonextra.Marshal(plainTask(t), t.Extra) }
//
//	func (t *Task) UnmarshalJSON(b []byte) (err error) {
//		t.Extra, err = jsonextra.Unmarshal(b, (*plainTask)(t), taskKeys)
//		return err
//	}
package jsonextra

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Keys lists the lower-cased JSON member names of the fields of v, a struct or a pointer to
// one, for Unmarshal: a field's name in its json tag, else its Go name. encoding/json
// matches member names to fields regardless of case, so a member is known when it matches
// one of them in any case. Fields tagged "-" and unexported ones are not listed; the
// fields of an untagged embedded struct are, as encoding/json promotes them.
func Keys(v any) []string {
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return keysOf(t)
}

func keysOf(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				keys = append(keys, keysOf(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		keys = append(keys, strings.ToLower(name))
	}
	return keys
}

// Marshal encodes known, which must encode as a JSON object, then writes extra's members
// after its own, in name order so that the output is stable. A member of extra without a
// value is written as null. extra should not repeat a member known writes.
func Marshal(known any, extra map[string]json.RawMessage) ([]byte, error) {
	base, err := json.Marshal(known)
	if err != nil || len(extra) == 0 {
		return base, err
	}
	if len(base) < 2 || base[len(base)-1] != '}' {
		return nil, fmt.Errorf("jsonextra: %T does not encode as a JSON object", known)
	}
	names := make([]string, 0, len(extra))
	for k := range extra {
		names = append(names, k)
	}
	slices.Sort(names)
	var b bytes.Buffer
	b.Grow(len(base) + 64*len(extra))
	b.Write(base[:len(base)-1])
	for i, k := range names {
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

// Unmarshal decodes data into known, a pointer, and returns the members of the object that
// keys (Keys of known's type) does not name, byte for byte as data has them; nil when
// there are none.
func Unmarshal(data []byte, known any, keys []string) (map[string]json.RawMessage, error) {
	if err := json.Unmarshal(data, known); err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	var extra map[string]json.RawMessage
	for k, v := range all {
		if slices.Contains(keys, strings.ToLower(k)) {
			continue
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[k] = v
	}
	return extra, nil
}

// Compact returns extra without its members whose value is null (or missing) and with
// every other value compacted (json.Compact); nil when no member is left. A type that
// stores what it keeps uses it after Unmarshal, so that what it stores and echoes depends
// neither on the sender's spacing nor on the members the sender wrote as null.
func Compact(extra map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	var out map[string]json.RawMessage
	for k, v := range extra {
		v = bytes.TrimSpace(v)
		if len(v) == 0 || bytes.Equal(v, []byte("null")) {
			continue
		}
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return nil, err
		}
		if out == nil {
			out = make(map[string]json.RawMessage, len(extra))
		}
		out[k] = c.Bytes()
	}
	return out, nil
}

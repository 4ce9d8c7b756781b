package secrets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Sealer seals values and opens them again; *Box is one.
type Sealer interface {
	Seal(plain string) (string, error)
	Open(sealed string) (string, error)
}

// SealJSON seals a JSON value for storage, as the JSON string of its sealed text; nothing
// (empty or null) stays nothing.
func SealJSON(box Sealer, raw json.RawMessage) (json.RawMessage, error) {
	if trimmed := bytes.TrimSpace(raw); len(trimmed) == 0 || string(trimmed) == "null" {
		return raw, nil
	}
	sealed, err := box.Seal(string(raw))
	if err != nil {
		return nil, err
	}
	return json.Marshal(sealed)
}

// OpenJSON reverses SealJSON. A value that is not sealed is returned as it is (stored
// before sealing began); one this key cannot open reads as the Mask, which every answer
// shows for it anyway.
func OpenJSON(box Sealer, raw json.RawMessage) json.RawMessage {
	var sealed string
	if json.Unmarshal(raw, &sealed) != nil || !IsSealed(sealed) {
		return raw
	}
	plain, err := box.Open(sealed)
	if err != nil || !json.Valid([]byte(plain)) {
		masked, _ := json.Marshal(Mask)
		return masked
	}
	return json.RawMessage(plain)
}

// SealFields answers items with, in each item secret says holds secrets, the JSON values
// fields points at sealed as SealJSON seals them; what names an item in an error. items
// is not changed: a copy is answered, or items itself when none holds secrets.
func SealFields[T any](box Sealer, items []T, secret func(T) bool, fields func(*T) []*json.RawMessage, what func(T) string) ([]T, error) {
	if !slices.ContainsFunc(items, secret) {
		return items, nil
	}
	out := slices.Clone(items)
	for i := range out {
		if !secret(out[i]) {
			continue
		}
		for _, v := range fields(&out[i]) {
			sealed, err := SealJSON(box, *v)
			if err != nil {
				return nil, fmt.Errorf("seal %s: %w", what(out[i]), err)
			}
			*v = sealed
		}
	}
	return out, nil
}

// OpenFields reverses SealFields in place, each value as OpenJSON opens it.
func OpenFields[T any](box Sealer, items []T, secret func(T) bool, fields func(*T) []*json.RawMessage) {
	for i := range items {
		if !secret(items[i]) {
			continue
		}
		for _, v := range fields(&items[i]) {
			*v = OpenJSON(box, *v)
		}
	}
}

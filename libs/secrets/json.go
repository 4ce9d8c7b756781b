package secrets

import (
	"bytes"
	"encoding/json"
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

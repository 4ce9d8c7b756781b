package domain

import (
	"bytes"
	"encoding/json"
)

// Extra holds the members of a JSON object that its Go type does not know. API.md §1 has
// unknown fields of workflows, their tasks and canvas data kept and echoed: designers store
// their own extras there.
type Extra map[string]json.RawMessage

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
